package dev.idem.coupons;

import dev.idem.outbox.OutboxRepository;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;

/**
 * The coupon a paid order earns. It is attached to the PAID transition, never to the callback's
 * entry: the grant leaves through the outbox in the transaction that paid the order.
 */
@ApplicationScoped
public class PaidOrderCampaign {

    public static final String GRANTS_TOPIC = "coupon-grants";

    private final CouponsConfig.Campaign config;
    private final OutboxRepository outbox;

    PaidOrderCampaign(CouponsConfig config, OutboxRepository outbox) {
        this.config = config.campaign();
        this.outbox = outbox;
    }

    /** Writes the grant event for a freshly paid order, when a campaign runs. */
    public Uni<Void> onPaid(SqlConnection tx, String orderId, String userId) {
        return config.paidCouponTemplate()
                .map(template -> outbox.append(tx, GRANTS_TOPIC, bizKey(orderId), grant(template, orderId, userId)))
                .orElseGet(() -> Uni.createFrom().voidItem());
    }

    /** Sends a paid order's grant again, for the campaign it earned (its coupon was found missing). */
    public Uni<Void> regrant(SqlClient client, String orderId, String userId, String template) {
        return outbox.republish(client, GRANTS_TOPIC, bizKey(orderId), grant(template, orderId, userId));
    }

    /** The template a paid order earns now, if a campaign runs; the PAID transition records it. */
    public Optional<String> template() {
        return config.paidCouponTemplate();
    }

    private static JsonObject grant(String template, String orderId, String userId) {
        return new JsonObject()
                .put("bizKey", bizKey(orderId))
                .put("userId", userId)
                .put("templateId", template)
                .put("orderId", orderId);
    }

    public static String bizKey(String orderId) {
        return "paid:" + orderId;
    }
}
