package dev.idem.payments;

import dev.idem.coupons.PaidOrderCampaign;
import dev.idem.orders.Order;
import dev.idem.orders.OrderRepository;
import dev.idem.orders.OrderStateMachine;
import dev.idem.orders.OrderStateMachine.Miss;
import dev.idem.orders.OrderStatus;
import dev.idem.orders.PaymentGateway;
import dev.idem.pipeline.Effect;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Item;
import dev.idem.pipeline.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;

/**
 * Applies a payment notification, whichever channel brought it: through the pipeline, as a
 * conditional state transition, with the campaign's grant written by the PAID transition.
 */
@ApplicationScoped
public class PaymentService {

    public static final String SCOPE = "payment-callback";

    private final IdempotencyPipeline pipeline;
    private final OrderRepository orders;
    private final AnomalyRepository anomalies;
    private final PaidOrderCampaign campaign;
    private final MeterRegistry registry;
    private final Clock clock;

    PaymentService(IdempotencyPipeline pipeline, OrderRepository orders, AnomalyRepository anomalies,
                   PaidOrderCampaign campaign, MeterRegistry registry, Clock clock) {
        this.pipeline = pipeline;
        this.orders = orders;
        this.anomalies = anomalies;
        this.campaign = campaign;
        this.registry = registry;
        this.clock = clock;
    }

    /**
     * {@code via}: the gateway that took the money (null: not known, as for idem's own signed
     * callback). An order that named none comes to name it when paid, so that the gateway's bill is
     * compared with it.
     */
    public Uni<Outcome> apply(PaymentCallback callback, PaymentGateway via) {
        return pipeline.execute(callback.idemRequest(SCOPE), tx -> transition(tx, callback, via))
                .invoke(outcome -> alertIfAnomaly(outcome, callback));
    }

    /**
     * Many payments of one gateway at once, as {@link IdempotencyPipeline#executeAll} runs them:
     * one transaction, each with the outcome it would have had alone, in order. Fails as a whole
     * when the transaction fails; then none took effect.
     */
    public Uni<List<Outcome>> applyAll(List<PaymentCallback> callbacks, PaymentGateway via) {
        List<Item> items = callbacks.stream()
                .map(callback -> new Item(callback.idemRequest(SCOPE),
                        tx -> transition(tx, callback, via)))
                .toList();
        return pipeline.executeAll(items).invoke(outcomes -> {
            for (int i = 0; i < outcomes.size(); i++) {
                alertIfAnomaly(outcomes.get(i), callbacks.get(i));
            }
        });
    }

    private void alertIfAnomaly(Outcome outcome, PaymentCallback callback) {
        if (outcome instanceof Outcome.Anomaly anomaly) {
            alert(anomaly.kind(), callback);
        }
    }

    /** The answer a gateway gets for a delivery that was recorded: it stops retrying. */
    public static JsonObject received() {
        return new JsonObject().put("code", "SUCCESS");
    }

    /** The notification's state transition, as the pipeline runs it in its transaction. */
    Uni<Effect> transition(SqlConnection tx, PaymentCallback callback, PaymentGateway via) {
        Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
        Uni<Optional<String>> moved = callback.succeeded()
                ? orders.pay(tx, callback.orderId(), callback.tradeNo(), callback.amountCents(),
                        callback.paidAt() == null ? now : callback.paidAt().truncatedTo(ChronoUnit.MICROS),
                        campaign.template().orElse(null), via)
                : orders.close(tx, callback.orderId(), now);
        return moved.chain(owner -> owner.isPresent()
                ? applied(tx, callback, owner.get())
                : explainMiss(tx, callback, now));
    }

    private Uni<Effect> applied(SqlConnection tx, PaymentCallback callback, String userId) {
        Uni<Void> effects = callback.succeeded()
                ? campaign.onPaid(tx, callback.orderId(), userId)
                : Uni.createFrom().voidItem();
        return effects.replaceWith(new Effect.Processed(received()));
    }

    /** The conditional update matched no row: a missing order, a duplicate, or an anomaly. */
    private Uni<Effect> explainMiss(SqlConnection tx, PaymentCallback callback, Instant now) {
        return orders.find(tx, callback.orderId()).chain(found -> {
            if (found.isEmpty()) {
                // not the key's answer: a notification reports a fact, to be applied once its order is visible
                return Uni.createFrom().item(Effect.Rejected.forNow("ORDER_NOT_FOUND", "no order " + callback.orderId()));
            }
            Order order = found.get();
            OrderStatus target = callback.succeeded() ? OrderStatus.PAID : OrderStatus.CLOSED;
            Miss miss = OrderStateMachine.afterMiss(order, target, callback.tradeNo(), callback.amountCents());
            if (miss == Miss.DUPLICATE) {
                return Uni.createFrom().item(new Effect.Duplicate(received()));
            }
            JsonObject detail = new JsonObject()
                    .put("orderStatus", order.status().name())
                    .put("orderTradeNo", order.tradeNo())
                    .put("orderAmountCents", order.amountCents())
                    .put("callbackAmountCents", callback.amountCents());
            return anomalies.record(tx, miss.name(), callback, detail, now)
                    .replaceWith(new Effect.Anomaly(miss.name(), received().put("anomaly", miss.name())));
        });
    }

    private void alert(String kind, PaymentCallback callback) {
        Counter.builder("idem.payment.anomalies")
                .description("Payment notifications recorded as anomalies, by kind")
                .tag("kind", kind)
                .register(registry).increment();
        Log.errorf("ALERT payment anomaly %s: order %s, trade %s, status %s, amount %d",
                kind, callback.orderId(), callback.tradeNo(), callback.status(), callback.amountCents());
    }
}
