package dev.idem.orders;

import dev.idem.pipeline.Statement;
import dev.idem.support.TimeOrderedIds;
import dev.idem.tokens.TokenStore;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/** Order submits behind an Idempotency-Key or a one-time token, and reads by owner. */
@ApplicationScoped
public class OrderService {

    public static final String SUBMIT_SCOPE = "order-submit";

    /** What became of a submit behind a one-time token. */
    public sealed interface TokenSubmit {
        /** The order was created. */
        record Created(Order order) implements TokenSubmit {}

        /** Unknown, expired, used, or another user's token. */
        record Invalid() implements TokenSubmit {}

        /** The token store (Redis) could not be asked. */
        record StoreUnavailable() implements TokenSubmit {}
    }

    private final OrderRepository orders;
    private final Pool pool;
    private final TokenStore tokens;
    private final FirstQuery firstQuery;
    private final Clock clock;

    OrderService(OrderRepository orders, Pool pool, TokenStore tokens, FirstQuery firstQuery, Clock clock) {
        this.orders = orders;
        this.pool = pool;
        this.tokens = tokens;
        this.firstQuery = firstQuery;
        this.clock = clock;
    }

    /** An order made, and its insert, not yet sent. */
    public record NewOrder(Order order, Statement insert) {}

    /**
     * Makes the order and its insert, for an Idempotency-Key submit's transaction, where its key is
     * recorded. The order is known before the insert answers (its id is made here).
     */
    public NewOrder create(String userId, OrderRequest request) {
        Order order = newOrder(userId, request);
        return new NewOrder(order, inserting(order));
    }

    /**
     * Creates the order if {@code token} is the user's unused one-time token. The token is consumed
     * first, atomically; if the order then cannot be stored, it is given back so the user can retry.
     */
    public Uni<TokenSubmit> submitWithToken(String userId, String token, OrderRequest request) {
        return tokens.consume(token, userId).chain(consumption -> {
            if (consumption instanceof TokenStore.Consumption.Consumed consumed) {
                Order order = newOrder(userId, request);
                return pool.withTransaction(tx -> inserting(order).on(tx).replaceWithVoid())
                        .onFailure().call(() -> tokens.restore(token, userId, consumed.remaining()))
                        .replaceWith((TokenSubmit) new TokenSubmit.Created(order));
            }
            return Uni.createFrom().item(consumption instanceof TokenStore.Consumption.StoreUnavailable
                    ? new TokenSubmit.StoreUnavailable()
                    : new TokenSubmit.Invalid());
        });
    }

    public Uni<Optional<Order>> findOwned(String userId, String orderId) {
        return orders.find(pool, orderId).map(found -> found.filter(order -> order.userId().equals(userId)));
    }

    private Statement inserting(Order order) {
        return orders.inserting(order, firstQuery.at(order).orElse(null));
    }

    private Order newOrder(String userId, OrderRequest request) {
        return new Order(TimeOrderedIds.next(clock), userId, request.amountCents(), request.currency(),
                OrderStatus.WAIT_PAY, null, clock.instant().truncatedTo(ChronoUnit.MICROS), null,
                request.paymentGateway().orElse(null));
    }
}
