package dev.idem.coupons;

import io.vertx.core.json.JsonObject;
import java.time.Instant;

public record Coupon(String couponId, String userId, String templateId, String sourceKey, String orderId,
                     Instant grantedAt) {

    /** The public view: the owner is implied by the path that lists it. */
    public JsonObject toJson() {
        return new JsonObject()
                .put("couponId", couponId)
                .put("templateId", templateId)
                .put("sourceKey", sourceKey)
                .put("grantedAt", grantedAt.toString());
    }
}
