package dev.idem.pipeline;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Counters an operator alerts on. Prometheus names: {@code idem_pipeline_outcomes_total},
 * {@code idem_pipeline_duplicates_total}, {@code idem_redis_degraded_total}.
 */
@ApplicationScoped
public class PipelineMetrics {

    private final MeterRegistry registry;

    PipelineMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    void outcome(String scope, Outcome outcome) {
        Counter.builder("idem.pipeline.outcomes")
                .description("Deliveries by scope and outcome")
                .tag("scope", scope).tag("outcome", outcome.name())
                .register(registry).increment();
        if (outcome instanceof Outcome.Duplicate duplicate) {
            Counter.builder("idem.pipeline.duplicates")
                    .description("Duplicate deliveries by scope and the layer that caught them")
                    .tag("scope", scope).tag("layer", duplicate.layer().tag())
                    .register(registry).increment();
        }
    }

    void redisDegraded(String scope, String operation) {
        Counter.builder("idem.redis.degraded")
                .description("Redis calls skipped because Redis failed or exceeded its budget")
                .tag("scope", scope).tag("operation", operation)
                .register(registry).increment();
    }
}
