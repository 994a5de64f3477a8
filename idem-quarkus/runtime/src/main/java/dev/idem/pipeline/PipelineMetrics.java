package dev.idem.pipeline;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;

/**
 * Counters an operator alerts on. Prometheus names: {@code idem_pipeline_outcomes_total},
 * {@code idem_pipeline_duplicates_total}, {@code idem_redis_degraded_total}; and how deliveries
 * shared transactions: {@code idem_pipeline_group_size} (deliveries per transaction),
 * {@code idem_pipeline_group_in_flight} (transactions each event loop keeps in flight),
 * {@code idem_pipeline_group_retries_total{reason}} (transactions run again without a delivery
 * that met another's record, or delivery by delivery after an error); what happens to two-phase
 * records: {@code idem_dedup_takeovers_total{scope}} (a hanging record was taken over) and
 * {@code idem_dedup_failed_total{scope}} (a record gave up: its effect kept failing).
 */
@ApplicationScoped
class PipelineMetrics {

    private final MeterRegistry registry;
    /** Registering a counter builds and sorts its tags; each delivery only looks its counters up. */
    private final Map<String, Counter> outcomes = new ConcurrentHashMap<>();
    private final Map<String, Counter> duplicates = new ConcurrentHashMap<>();

    private final DistributionSummary groupSizes;

    PipelineMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.groupSizes = DistributionSummary.builder("idem.pipeline.group.size")
                .description("One-phase deliveries per database transaction")
                .register(registry);
    }

    void groupSize(int deliveries) {
        groupSizes.record(deliveries);
    }

    /** The group transactions each event loop keeps in flight now (tuned, or as configured). */
    void inFlight(IntSupplier kept) {
        Gauge.builder("idem.pipeline.group.in.flight", kept::getAsInt)
                .description("Group transactions each event loop keeps in flight")
                .register(registry);
    }

    void groupRetried(String reason) {
        Counter.builder("idem.pipeline.group.retries")
                .description("Group transactions run again: without a delivery that met another's record (conflict), "
                        + "or delivery by delivery after an error (error)")
                .tag("reason", reason)
                .register(registry).increment();
    }

    void outcome(String scope, Outcome outcome) {
        String name = outcome.name();
        outcomes.computeIfAbsent(scope + ' ' + name, k -> Counter.builder("idem.pipeline.outcomes")
                .description("Deliveries by scope and outcome")
                .tag("scope", scope).tag("outcome", name)
                .register(registry)).increment();
        // a key's stored refusal given again is a duplicate delivery too, caught by its layer
        Layer caught = outcome instanceof Outcome.Duplicate duplicate ? duplicate.layer()
                : outcome instanceof Outcome.Rejected rejected ? rejected.replayedBy().orElse(null)
                : null;
        if (caught != null) {
            String layer = caught.tag();
            duplicates.computeIfAbsent(scope + ' ' + layer, k -> Counter.builder("idem.pipeline.duplicates")
                    .description("Duplicate deliveries by scope and the layer that caught them")
                    .tag("scope", scope).tag("layer", layer)
                    .register(registry)).increment();
        }
    }

    void mistake(String scope, String kind) {
        Counter.builder("idem.pipeline.mistakes")
                .description("Works that wrote outside their transaction (no-statement) or held it long (slow)")
                .tag("scope", scope).tag("kind", kind)
                .register(registry).increment();
    }

    void redisDegraded(String scope, String operation) {
        Counter.builder("idem.redis.degraded")
                .description("Redis calls skipped because Redis failed or exceeded its budget")
                .tag("scope", scope).tag("operation", operation)
                .register(registry).increment();
    }

    void takeover(String scope) {
        Counter.builder("idem.dedup.takeovers")
                .description("Hanging two-phase records taken over after their lease")
                .tag("scope", scope)
                .register(registry).increment();
    }

    void failed(String scope) {
        Counter.builder("idem.dedup.failed")
                .description("Two-phase records marked FAILED after their last attempt")
                .tag("scope", scope)
                .register(registry).increment();
    }
}
