package dev.idem.orders;

import io.vertx.core.json.JsonObject;
import java.time.Instant;

/** An order as stored and as answered; {@code gateway} is null when the order named none. */
public record Order(
        String orderId,
        String userId,
        long amountCents,
        String currency,
        OrderStatus status,
        String tradeNo,
        Instant createdAt,
        Instant paidAt,
        PaymentGateway gateway) {

    public JsonObject toJson() {
        return new JsonObject()
                .put("orderId", orderId)
                .put("userId", userId)
                .put("amountCents", amountCents)
                .put("currency", currency)
                .put("status", status.name())
                .put("tradeNo", tradeNo)
                .put("createdAt", createdAt == null ? null : createdAt.toString())
                .put("paidAt", paidAt == null ? null : paidAt.toString())
                .put("gateway", gateway == null ? null : gateway.id());
    }
}
