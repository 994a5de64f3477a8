package dev.idem.ops;

import dev.idem.coupons.CouponService;
import dev.idem.coupons.PaidOrderCampaign;
import dev.idem.ops.ReconciliationChecks.Check;
import dev.idem.orders.OrderRepository;
import dev.idem.outbox.OutboxRepository;
import dev.idem.pipeline.DedupAdmin;
import dev.idem.pipeline.Finding;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * 对账: does what the tables say agree with itself? Every check answers a count and samples; a
 * healthy system answers zeros. The findings are also gauges
 * ({@code idem_reconciliation_findings{check}}, {@code idem_outbox_lag_seconds}), recomputed on a
 * schedule, so an operator can alert on them.
 */
@ApplicationScoped
public class Reconciliation {

    /** How many offenders one repair takes on; the next repair goes on. */
    private static final int REPAIR_LIMIT = 1_000;

    private final Pool pool;
    private final ReconciliationChecks checks;
    private final OpsConfig.Reconciliation config;
    private final PaidOrderCampaign campaign;
    private final OrderRepository orders;
    private final OutboxRepository outbox;
    private final DedupAdmin dedup;
    private final Clock clock;
    private final Map<String, AtomicLong> gauges = new HashMap<>();
    private final AtomicLong outboxLagSeconds = new AtomicLong();

    Reconciliation(Pool pool, ReconciliationChecks checks, OpsConfig config, PaidOrderCampaign campaign,
                   OrderRepository orders, OutboxRepository outbox, DedupAdmin dedup, MeterRegistry registry,
                   Clock clock) {
        this.pool = pool;
        this.checks = checks;
        this.config = config.reconciliation();
        this.campaign = campaign;
        this.orders = orders;
        this.outbox = outbox;
        this.dedup = dedup;
        this.clock = clock;
        List<String> labels = new ArrayList<>();
        for (Check check : Check.values()) {
            labels.add(check.label);
        }
        labels.add(DedupAdmin.HANGING);
        labels.add(DedupAdmin.FAILED);
        labels.add(DedupAdmin.MARKS_WITHOUT_RECORD);
        for (String label : labels) {
            AtomicLong value = new AtomicLong();
            gauges.put(label, value);
            Gauge.builder("idem.reconciliation.findings", value, AtomicLong::get)
                    .description("Reconciliation findings by check; a healthy system reports zeros")
                    .tag("check", label).register(registry);
        }
        Gauge.builder("idem.outbox.lag.seconds", outboxLagSeconds, AtomicLong::get)
                .description("Age of the oldest outbox event not yet published").register(registry);
    }

    /** The report; {@code since} limits it to what was written from then on. */
    public Uni<JsonObject> report(Instant since) {
        return findings(since, config.samples()).map(findings -> {
            JsonObject body = new JsonObject();
            long total = 0;
            for (Finding finding : findings) {
                total += finding.count();
                body.put(finding.check(), new JsonObject()
                        .put("count", finding.count())
                        .put("samples", new JsonArray(List.copyOf(finding.samples()))));
            }
            return new JsonObject()
                    .put("at", clock.instant().toString())
                    .put("since", since.toString())
                    .put("healthy", total == 0)
                    .put("checks", body);
        });
    }

    /**
     * Re-publishes the grants of paid orders without a coupon (after forgetting the grant's DONE
     * record, which vouched for a coupon that is gone), re-drives hanging records, and drops the
     * DONE marks whose record was lost, so that the payment's next notification is applied.
     * Idempotent: the coupons' unique source key and the pipeline stop any double.
     */
    public Uni<JsonObject> repair() {
        Uni<Integer> regranted = checks.run(pool, Check.PAID_ORDERS_WITHOUT_COUPON, cutoff(), Instant.EPOCH,
                        REPAIR_LIMIT, clock.instant())
                .chain(finding -> Multi.createFrom().iterable(finding.samples())
                        .onItem().transformToUniAndConcatenate(this::regrant)
                        .collect().asList())
                .map(List::size);
        return regranted.chain(count -> dedup.redriveHanging().chain(redrive -> dedup.dropMarksWithoutRecord()
                .map(dropped -> new JsonObject()
                        .put("grantsRepublished", count)
                        .put("redrive", redrive.toJson())
                        .put("marksDropped", dropped))));
    }

    private Uni<String> regrant(String orderId) {
        return orders.earned(pool, orderId).chain(earned -> earned
                .map(e -> dedup.forget(CouponService.SCOPE, PaidOrderCampaign.bizKey(orderId))
                        .chain(() -> campaign.regrant(pool, orderId, e.userId(), e.campaign())))
                .orElseGet(() -> Uni.createFrom().voidItem()))
                .replaceWith(orderId);
    }

    /** The gauges are recomputed every {@code idem.reconciliation.interval}, the first time after start-up's traffic. */
    @Scheduled(every = "${idem.reconciliation.interval}", delayed = "30s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> refreshGauges() {
        return findings(Instant.EPOCH, 0)
                .invoke(findings -> findings.forEach(f -> gauges.get(f.check()).set(f.count())))
                .chain(() -> outbox.oldestUnpublished(pool))
                .invoke(oldest -> outboxLagSeconds.set(oldest
                        .map(at -> Math.max(0, Duration.between(at, clock.instant()).toSeconds())).orElse(0L)))
                .onFailure().invoke(failure -> Log.warnf("Reconciliation gauges not refreshed: %s", failure.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    private Uni<List<Finding>> findings(Instant since, int samples) {
        Instant now = clock.instant();
        return Multi.createFrom().items(Check.values())
                .onItem().transformToUniAndConcatenate(check -> checks.run(pool, check, cutoff(), since, samples, now))
                .collect().asList()
                .chain(own -> dedup.findings(since, samples).map(pipeline -> {
                    List<Finding> all = new ArrayList<>(own);
                    all.addAll(pipeline);
                    return all;
                }));
    }

    private Instant cutoff() {
        return clock.instant().minus(config.grace());
    }
}
