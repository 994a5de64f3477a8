package dev.idem.orders;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.IdemRequest;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Outcome;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.UUID;

/** Order submits behind an Idempotency-Key, and reads by owner. */
@ApplicationScoped
public class OrderService {

    public static final String SUBMIT_SCOPE = "order-submit";

    private final IdempotencyPipeline pipeline;
    private final OrderRepository orders;
    private final Pool pool;
    private final Clock clock;

    OrderService(IdempotencyPipeline pipeline, OrderRepository orders, Pool pool, Clock clock) {
        this.pipeline = pipeline;
        this.orders = orders;
        this.pool = pool;
        this.clock = clock;
    }

    /**
     * Creates the order once per (user, key). The stored result is the whole answer (status and
     * body), so a replay answers byte for byte what the first request answered.
     */
    public Uni<Outcome> submit(String userId, String idempotencyKey, OrderRequest request) {
        IdemRequest idem = new IdemRequest(SUBMIT_SCOPE, keyOf(userId, idempotencyKey),
                IdemRequest.fingerprint(request.amountCents(), request.currency()));
        return pipeline.execute(idem, tx -> {
            Order order = newOrder(userId, request);
            return orders.insert(tx, order).replaceWith(new Effect.Applied(stored(201, order.toJson())));
        });
    }

    public Uni<Optional<Order>> findOwned(String userId, String orderId) {
        return orders.find(pool, orderId).map(found -> found.filter(order -> order.userId().equals(userId)));
    }

    /** A stored HTTP answer: what a replay sends again. */
    public static JsonObject stored(int status, JsonObject body) {
        return new JsonObject().put("status", status).put("body", body);
    }

    /** Keys are per user: the user id is encoded so that no (user, key) pair can pose as another. */
    static String keyOf(String userId, String idempotencyKey) {
        return URLEncoder.encode(userId, StandardCharsets.UTF_8) + ":" + idempotencyKey;
    }

    private Order newOrder(String userId, OrderRequest request) {
        return new Order(UUID.randomUUID().toString(), userId, request.amountCents(), request.currency(),
                OrderStatus.WAIT_PAY, null, clock.instant().truncatedTo(ChronoUnit.MICROS), null);
    }
}
