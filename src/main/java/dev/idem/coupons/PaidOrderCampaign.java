package dev.idem.coupons;

import dev.idem.outbox.OutboxRepository;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The coupon a paid order earns. It is attached to the PAID transition, never to the callback's
 * entry: the grant leaves through the outbox in the transaction that paid the order.
 */
@ApplicationScoped
public class PaidOrderCampaign {

    public static final String GRANTS_TOPIC = "coupon-grants";

    private final CampaignConfig config;
    private final OutboxRepository outbox;

    PaidOrderCampaign(CampaignConfig config, OutboxRepository outbox) {
        this.config = config;
        this.outbox = outbox;
    }

    /** Writes the grant event for a freshly paid order, when a campaign runs. */
    public Uni<Void> onPaid(SqlConnection tx, String orderId, String userId) {
        return config.paidCouponTemplate()
                .map(template -> {
                    String bizKey = bizKey(orderId);
                    JsonObject grant = new JsonObject()
                            .put("bizKey", bizKey)
                            .put("userId", userId)
                            .put("templateId", template)
                            .put("orderId", orderId);
                    return outbox.append(tx, GRANTS_TOPIC, bizKey, grant);
                })
                .orElseGet(() -> Uni.createFrom().voidItem());
    }

    public static String bizKey(String orderId) {
        return "paid:" + orderId;
    }
}
