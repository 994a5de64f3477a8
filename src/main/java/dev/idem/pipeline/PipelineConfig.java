package dev.idem.pipeline;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/** How the pipeline treats each scope: {@code idem.pipeline.*} with per-scope overrides. */
@ConfigMapping(prefix = "idem.pipeline")
public interface PipelineConfig {

    /** Prefix of every Redis key the pipeline writes. */
    @WithDefault("idem")
    String redisPrefix();

    /** Longest a Redis call may take before the pipeline goes on without Redis. */
    @WithDefault("100ms")
    Duration redisBudget();

    /**
     * The same bound for the Redis script call of a batch (a Kafka poll's). No client waits on a
     * batch, and a script runs hundreds of commands; the bound only keeps a hung Redis from
     * holding a partition.
     */
    @WithDefault("1s")
    Duration redisBatchBudget();

    /** Redis TTL of a scope without its own; must outlast the source's retry window. */
    @WithDefault("26h")
    Duration redisTtl();

    /** What a client is told to wait when its key is still being worked on. */
    @WithDefault("1s")
    Duration inFlightRetryAfter();

    /** How deliveries that wait for the database at the same time come to share one transaction. */
    GroupCommit groupCommit();

    Map<String, Scope> scopes();

    interface GroupCommit {
        /** The most deliveries in one transaction (1: every delivery its own). */
        @WithDefault("32")
        int maxSize();

        /**
         * Transactions of gathered deliveries in flight at once, per event loop. A delivery that
         * finds them all busy waits for the next one and shares it with whatever else waits; an
         * idle service starts it at once.
         */
        @WithDefault("1")
        int inFlight();
    }

    interface Scope {
        Optional<Duration> redisTtl();

        /** Dedup retention of this scope; {@code idem.dedup.retention} when absent. */
        Optional<Duration> retention();

        /**
         * How long a request waits for a concurrent one holding the same key. Absent: it waits
         * for the other transaction and then sees its outcome; present: after this long it is
         * answered IN_FLIGHT.
         */
        Optional<Duration> concurrentWait();
    }

    default Duration redisTtl(String scope) {
        Scope s = scopes().get(scope);
        return s == null ? redisTtl() : s.redisTtl().orElse(redisTtl());
    }

    default Optional<Duration> concurrentWait(String scope) {
        Scope s = scopes().get(scope);
        return s == null ? Optional.empty() : s.concurrentWait();
    }

    /** How long a record of {@code scope} is kept: its own retention, else {@code idem.dedup.retention}. */
    default Duration retention(String scope, DedupConfig dedup) {
        return retention(scope).orElse(dedup.retention());
    }

    default Optional<Duration> retention(String scope) {
        Scope s = scopes().get(scope);
        return s == null ? Optional.empty() : s.retention();
    }
}
