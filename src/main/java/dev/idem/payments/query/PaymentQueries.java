package dev.idem.payments.query;

import dev.idem.orders.OrderRepository;
import dev.idem.orders.OrderRepository.QueryClaim;
import dev.idem.orders.PaymentGateway;
import dev.idem.payments.GatewayTraces;
import dev.idem.payments.PaymentService;
import dev.idem.pipeline.Outcome;
import dev.idem.support.Waits;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The active query (主动查单): orders still waiting for their payment are asked of their gateway,
 * so that a payment whose notification never came is found. Every second, due orders are claimed
 * ({@link OrderRepository#claimQueries}: one statement, SKIP LOCKED, a lease), each gateway is
 * asked at its own pace with retries, a paid answer is applied by {@link PaymentService} exactly
 * as that gateway's notification is (same dedup key, same fingerprint: whichever comes second is a
 * duplicate), and the next query is scheduled. Nothing here blocks: the claim, the requests, the
 * waits and the payment all run on the job's event loop.
 */
@ApplicationScoped
public class PaymentQueries {

    /** Attempts of one request within a query, when the failure may pass (no answer, 5xx, 429). */
    static final int ATTEMPTS = 3;
    static final Duration RETRY_DELAY = Duration.ofMillis(500);
    /**
     * How long a claim keeps other instances off an order: far longer than a query takes (its
     * attempts, each bounded by the client's timeouts, and the payment), so that only an instance
     * that died mid-query lets another ask again, after it.
     */
    static final Duration LEASE = Duration.ofMinutes(2);

    private final OrderRepository orders;
    private final Pool pool;
    private final PaymentService payments;
    private final QueryPlan plan;
    private final Vertx vertx;
    private final Clock clock;
    private final Map<PaymentGateway, QueryPace> paces = new EnumMap<>(PaymentGateway.class);
    private final Map<PaymentGateway, Map<String, Counter>> counters = new EnumMap<>(PaymentGateway.class);
    private final int batch;
    private final GatewayTraces traces;

    PaymentQueries(OrderRepository orders, Pool pool, PaymentService payments, QueryPlan plan, Vertx vertx,
                   MeterRegistry registry, Clock clock, GatewayTraces traces) {
        this.traces = traces;
        this.orders = orders;
        this.pool = pool;
        this.payments = payments;
        this.plan = plan;
        this.vertx = vertx;
        this.clock = clock;
        int most = 1;
        for (GatewayQuery gateway : plan.queried()) {
            paces.put(gateway.gateway(), new QueryPace(gateway.schedule().rate()));
            counters.put(gateway.gateway(), counters(registry, gateway.gateway()));
            most = Math.max(most, gateway.schedule().rate());
        }
        // a second's worth for the fastest gateway: a run then lasts about the second between runs
        this.batch = most;
    }

    /** Every result of every queried gateway, at zero from the start, so that a dashboard sees them all. */
    private static Map<String, Counter> counters(MeterRegistry registry, PaymentGateway gateway) {
        return Stream.of("paid", "unpaid", "closed", "not_found", "error")
                .collect(Collectors.toMap(result -> result, result -> Counter
                        .builder("idem.gateway.queries")
                        .description("Orders asked of their payment gateway, by gateway and what it answered")
                        .tag("gateway", gateway.id()).tag("result", result)
                        .register(registry)));
    }

    @Scheduled(every = "1s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP, skipExecutionIf = NoQueries.class)
    Uni<Void> run() {
        return queryDue()
                .onFailure().invoke(failure -> Log.warnf("Gateway queries failed, the next run retries: %s",
                        failure.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /** Skipped while no gateway is queried, and before start-up has migrated the schema. */
    @Singleton
    static class NoQueries implements Scheduled.SkipPredicate {
        private final QueryPlan plan;
        private final Scheduled.ApplicationNotRunning starting;

        NoQueries(QueryPlan plan, Scheduled.ApplicationNotRunning starting) {
            this.plan = plan;
            this.starting = starting;
        }

        @Override
        public boolean test(ScheduledExecution execution) {
            return !plan.any() || starting.test(execution);
        }
    }

    /** Claims the orders whose query is due and asks about each; answers how many were asked. */
    Uni<Integer> queryDue() {
        Instant now = clock.instant();
        return orders.claimQueries(pool, now, batch, now.minus(plan.expiry()), plan.queriedGateways(), LEASE)
                .chain(claims -> claims.isEmpty()
                        ? Uni.createFrom().item(0)
                        : Multi.createFrom().iterable(claims)
                                .onItem().transformToUniAndMerge(this::query)
                                .collect().asList().map(List::size));
    }

    /** One claimed order: each of its gateways asked, what they said applied, the next query set. */
    private Uni<Void> query(QueryClaim claim) {
        return Multi.createFrom().iterable(plan.of(claim.gateway()))
                .onItem().transformToUniAndMerge(gateway -> traces.traced("idem gateway query", gateway.gateway(),
                        "idem.query.result", QueryAnswer::result,
                        () -> ask(gateway, claim.orderId(), 1).chain(answer -> apply(gateway, claim.orderId(), answer))))
                .collect().asList()
                .chain(answers -> {
                    boolean closedEverywhere = answers.stream().allMatch(a -> a instanceof QueryAnswer.Closed);
                    Instant next = closedEverywhere ? null
                            : plan.next(claim, clock.instant(), ThreadLocalRandom.current().nextDouble()).orElse(null);
                    return orders.scheduleQuery(pool, claim, next);
                })
                // one order's failure is its own: its lease runs out and it is asked again
                .onFailure().invoke(failure -> Log.warnf("Query of order %s not completed, asked again after its "
                        + "lease: %s", claim.orderId(), failure.toString()))
                .onFailure().recoverWithNull();
    }

    private Uni<QueryAnswer> ask(GatewayQuery gateway, String orderId, int attempt) {
        long wait = paces.get(gateway.gateway()).waitNanos(System.nanoTime());
        return after(TimeUnit.NANOSECONDS.toMillis(wait))
                .chain(() -> gateway.ask(orderId))
                .onFailure().recoverWithItem(failure -> new QueryAnswer.Failed("no answer: " + failure, true))
                .chain(answer -> answer instanceof QueryAnswer.Failed failed && failed.retry() && attempt < ATTEMPTS
                        ? after(RETRY_DELAY.toMillis() << (attempt - 1)).chain(() -> ask(gateway, orderId, attempt + 1))
                        : Uni.createFrom().item(answer));
    }

    /** A paid answer goes through the pipeline like the gateway's notification; every answer is counted. */
    private Uni<QueryAnswer> apply(GatewayQuery gateway, String orderId, QueryAnswer answer) {
        Uni<QueryAnswer> applied = Uni.createFrom().item(answer);
        if (answer instanceof QueryAnswer.Paid paid) {
            applied = payments.apply(paid.callback(), gateway.gateway())
                    .map(outcome -> {
                        if (outcome instanceof Outcome.Processed) {
                            Log.infof("Order %s was paid at %s (trade %s) and no notification had said so: "
                                    + "applied from the query", orderId, gateway.gateway().id(), paid.callback().tradeNo());
                        } else if (outcome instanceof Outcome.Rejected rejected) {
                            Log.warnf("Order %s paid at %s by the query's answer, rejected: %s %s", orderId,
                                    gateway.gateway().id(), rejected.reason(), rejected.detail());
                        }
                        return answer;
                    })
                    .onFailure().recoverWithItem(failure -> new QueryAnswer.Failed(
                            "the payment could not be applied: " + failure, true));
        }
        return applied.invoke(result -> {
            if (result instanceof QueryAnswer.Failed failed) {
                Log.warnf("Query of order %s at %s: %s", orderId, gateway.gateway().id(), failed.reason());
            }
            counters.get(gateway.gateway()).get(result.result()).increment();
        });
    }

    private Uni<Void> after(long millis) {
        return Waits.after(vertx, millis);
    }
}
