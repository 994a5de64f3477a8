package dev.idem.pipeline;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * What happens to two-phase records, for alerts: {@code idem_dedup_takeovers_total{scope}} (a
 * hanging record was taken over) and {@code idem_dedup_failed_total{scope}} (a record gave up:
 * its effect kept failing).
 */
@ApplicationScoped
class TwoPhaseMetrics {

    private final MeterRegistry registry;

    TwoPhaseMetrics(MeterRegistry registry) {
        this.registry = registry;
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
