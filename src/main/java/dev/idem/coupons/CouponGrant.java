package dev.idem.coupons;

import dev.idem.pipeline.IdemRequest;
import dev.idem.support.UserIds;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.Optional;

/** A {@code coupon-grants} message: grant {@code templateId} to {@code userId} once for {@code bizKey}. */
@RegisterForReflection
public record CouponGrant(String bizKey, String userId, String templateId, String orderId) {

    public Optional<String> violation() {
        if (blankOrLong(bizKey)) {
            return Optional.of("bizKey is required (at most 255 characters)");
        }
        if (!UserIds.valid(userId)) {
            return Optional.of("userId is required: " + UserIds.RULE);
        }
        if (blankOrLong(templateId)) {
            return Optional.of("templateId is required (at most 255 characters)");
        }
        if (orderId != null && blankOrLong(orderId)) {
            return Optional.of("orderId, when present, must be a non-blank id");
        }
        return Optional.empty();
    }

    public IdemRequest idemRequest(String scope) {
        return new IdemRequest(scope, bizKey, IdemRequest.fingerprint(userId, templateId, orderId));
    }

    private static boolean blankOrLong(String value) {
        return value == null || value.isBlank() || value.length() > 255;
    }
}
