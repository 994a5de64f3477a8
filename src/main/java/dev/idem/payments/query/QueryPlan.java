package dev.idem.payments.query;

import dev.idem.orders.FirstQuery;
import dev.idem.orders.Order;
import dev.idem.orders.OrderRepository.QueryClaim;
import dev.idem.payments.PaymentsConfig;
import dev.idem.orders.PaymentGateway;
import io.quarkus.arc.All;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Which gateways an order is asked of, and when. An order that names a gateway is asked of that
 * one, if it is queried; one that names none, of every gateway that is queried, on the earliest
 * first delay and the shortest maximum interval among them.
 */
@ApplicationScoped
public class QueryPlan implements FirstQuery {

    private final List<GatewayQuery> queried;
    private final Duration expiry;

    QueryPlan(@All List<GatewayQuery> gateways, PaymentsConfig payments) {
        this.queried = gateways.stream().filter(GatewayQuery::enabled)
                .sorted(Comparator.comparing(GatewayQuery::gateway)).toList();
        this.expiry = payments.orders().expiry();
    }

    public boolean any() {
        return !queried.isEmpty();
    }

    public List<GatewayQuery> queried() {
        return queried;
    }

    public List<PaymentGateway> queriedGateways() {
        return queried.stream().map(GatewayQuery::gateway).toList();
    }

    public Duration expiry() {
        return expiry;
    }

    /** The gateways asked about an order that names {@code named} (null: none). */
    public List<GatewayQuery> of(PaymentGateway named) {
        return named == null ? queried : queried.stream().filter(g -> g.gateway() == named).toList();
    }

    @Override
    public Optional<Instant> at(Order order) {
        return firstDelay(of(order.gateway())).map(order.createdAt()::plus);
    }

    /** After the claim's query, made at {@code now}: the next one, if the order has not expired by then. */
    public Optional<Instant> next(QueryClaim claim, Instant now, double random) {
        List<GatewayQuery> asked = of(claim.gateway());
        Optional<Duration> first = firstDelay(asked);
        Optional<Duration> max = asked.stream().map(g -> g.schedule().maxInterval()).min(Comparator.naturalOrder());
        if (first.isEmpty() || max.isEmpty()) {
            return Optional.empty();
        }
        return QuerySchedule.next(claim.createdAt(), now, claim.queries(), first.get(), max.get(), expiry, random);
    }

    private static Optional<Duration> firstDelay(List<GatewayQuery> asked) {
        return asked.stream().map(g -> g.schedule().firstDelay()).min(Comparator.naturalOrder());
    }
}
