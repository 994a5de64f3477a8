package dev.idem.coupons;

import dev.idem.pipeline.IdemRequest;
import dev.idem.support.Ids;
import dev.idem.support.UserIds;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.annotation.Nullable;
import java.util.Optional;

/** A {@code coupon-grants} message: grant {@code templateId} to {@code userId} once for {@code bizKey}. */
@RegisterForReflection
public record CouponGrant(String bizKey, String userId, String templateId, @Nullable String orderId) {

    private static final int MAX_ID = 255;

    public Optional<String> violation() {
        if (!Ids.valid(bizKey, MAX_ID)) {
            return Optional.of(Ids.rule("bizKey", MAX_ID));
        }
        if (!UserIds.valid(userId)) {
            return Optional.of("userId is required: " + UserIds.RULE);
        }
        if (!Ids.valid(templateId, MAX_ID)) {
            return Optional.of(Ids.rule("templateId", MAX_ID));
        }
        if (orderId != null && !Ids.valid(orderId, MAX_ID)) {
            return Optional.of("orderId, when present, must be 1 to " + MAX_ID + " characters, none of them a control character");
        }
        return Optional.empty();
    }

    public IdemRequest idemRequest(String scope) {
        return new IdemRequest(scope, bizKey, IdemRequest.fingerprint(userId, templateId, orderId));
    }

}
