package dev.idem.ops;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.health.SmallRyeHealthReporter;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code idem_ready}: 1 while the readiness checks are UP, 0 while they are DOWN. A probe's answer
 * is kept nowhere, so an alert could not say how long an instance has been out of rotation
 * ({@code IdemNotReady} in deploy/prometheus/alerts.yml). The checks are the probe's own, run every
 * few seconds without blocking.
 */
@ApplicationScoped
class ReadinessGauge {

    private final SmallRyeHealthReporter health;
    private final AtomicInteger ready = new AtomicInteger();

    ReadinessGauge(SmallRyeHealthReporter health, MeterRegistry registry) {
        this.health = health;
        Gauge.builder("idem.ready", ready, AtomicInteger::get)
                .description("1 while the readiness checks are UP, 0 while they are DOWN")
                .register(registry);
    }

    @Scheduled(every = "5s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> refresh() {
        return health.getReadinessAsync()
                .map(report -> report.isDown() ? 0 : 1)
                // checks that do not answer within the refresh are not an instance ready to serve
                .ifNoItem().after(Duration.ofSeconds(4)).recoverWithItem(0)
                .onFailure().recoverWithItem(0)
                .invoke(ready::set)
                .replaceWithVoid();
    }
}
