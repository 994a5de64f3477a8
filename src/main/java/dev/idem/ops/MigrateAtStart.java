package dev.idem.ops;

import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.interceptor.Interceptor;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.flywaydb.core.Flyway;

/**
 * The schema is migrated at start-up, beside the wiring of the Kafka channels rather than before it.
 * Quarkus' own {@code migrate-at-start} runs Flyway on the main thread before anything else starts,
 * so the whole start waits for it; here it runs on a worker thread from the first
 * start-up observer on, while Reactive Messaging wires its channels on the main thread, and start-up
 * waits for it before the service's own observers (the outbox relay, the jobs) and before the HTTP
 * server listens. What a started instance promises is unchanged: its schema is current, and a
 * failed migration fails the start.
 */
@ApplicationScoped
class MigrateAtStart {

    private final Instance<Flyway> flyway;
    private volatile CompletableFuture<Void> migration;

    MigrateAtStart(Instance<Flyway> flyway) {
        this.flyway = flyway;
    }

    /** Before Reactive Messaging's own observer ({@code LIBRARY_BEFORE}), which wires the channels. */
    void begin(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) StartupEvent start) {
        migration = CompletableFuture.runAsync(() -> flyway.get().migrate(), Infrastructure.getDefaultWorkerPool());
    }

    /** After the channels are wired, before the observers of default priority, which may use the tables. */
    void await(@Observes @Priority(Interceptor.Priority.APPLICATION) StartupEvent start) {
        try {
            migration.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
    }
}
