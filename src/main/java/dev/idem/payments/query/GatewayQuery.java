package dev.idem.payments.query;

import dev.idem.orders.PaymentGateway;
import io.smallrye.mutiny.Uni;

/** One gateway's query of an order by the merchant's order number (the order's id). */
public interface GatewayQuery {

    PaymentGateway gateway();

    /** Whether orders are asked of this gateway: {@code …query.enabled}, see {@link QuerySwitch}. */
    boolean enabled();

    /** This gateway's {@code …query.*}. */
    GatewayQueriesConfig.Query schedule();

    /**
     * One signed request and its verified answer. Never fails: a transport error, a timeout or an
     * answer that does not verify is a {@link QueryAnswer.Failed}. Runs on the caller's Vert.x
     * context and answers on it.
     */
    Uni<QueryAnswer> ask(String orderId);
}
