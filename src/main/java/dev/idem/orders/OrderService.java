package dev.idem.orders;

import dev.idem.pipeline.IdemRequest;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Outcome;
import dev.idem.pipeline.Work;
import dev.idem.tokens.TokenStore;
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

/** Order submits behind an Idempotency-Key or a one-time token, and reads by owner. */
@ApplicationScoped
public class OrderService {

    public static final String SUBMIT_SCOPE = "order-submit";

    /** What became of a submit behind a one-time token. */
    public sealed interface TokenSubmit {
        /** The order was created; {@code answer} is the stored HTTP answer, as a key's would be. */
        record Created(JsonObject answer) implements TokenSubmit {}

        /** Unknown, expired, used, or another user's token. */
        record Invalid() implements TokenSubmit {}

        /** The token store (Redis) could not be asked. */
        record StoreUnavailable() implements TokenSubmit {}
    }

    private final IdempotencyPipeline pipeline;
    private final OrderRepository orders;
    private final Pool pool;
    private final TokenStore tokens;
    private final Clock clock;

    OrderService(IdempotencyPipeline pipeline, OrderRepository orders, Pool pool, TokenStore tokens, Clock clock) {
        this.pipeline = pipeline;
        this.orders = orders;
        this.pool = pool;
        this.tokens = tokens;
        this.clock = clock;
    }

    /**
     * Creates the order once per (user, key). The stored result is the whole answer (status and
     * body), so a replay answers what the first request answered (as equal JSON: one read back from
     * the database's jsonb has its members in another order).
     */
    public Uni<Outcome> submit(String userId, String idempotencyKey, OrderRequest request) {
        IdemRequest idem = new IdemRequest(SUBMIT_SCOPE, keyOf(userId, idempotencyKey),
                IdemRequest.fingerprint(request.amountCents(), request.currency()));
        Order order = newOrder(userId, request);
        return pipeline.execute(idem, Work.applying(stored(201, order.toJson()), tx -> orders.insert(tx, order)));
    }

    /**
     * Creates the order if {@code token} is the user's unused one-time token. The token is consumed
     * first, atomically; if the order then cannot be stored, it is given back so the user can retry.
     */
    public Uni<TokenSubmit> submitWithToken(String userId, String token, OrderRequest request) {
        return tokens.consume(token, userId).chain(consumption -> {
            if (consumption instanceof TokenStore.Consumption.Consumed consumed) {
                Order order = newOrder(userId, request);
                return pool.withTransaction(tx -> orders.insert(tx, order))
                        .onFailure().call(() -> tokens.restore(token, userId, consumed.remaining()))
                        .replaceWith((TokenSubmit) new TokenSubmit.Created(stored(201, order.toJson())));
            }
            return Uni.createFrom().item(consumption instanceof TokenStore.Consumption.StoreUnavailable
                    ? new TokenSubmit.StoreUnavailable()
                    : new TokenSubmit.Invalid());
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
