package dev.idem.pipeline;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The extension's idempotency pipeline for unit tests: the same pipeline a service runs (Redis
 * pre-check, the work and the key's record in one transaction, DONE in Redis after the commit),
 * wired on an in-memory database and an in-memory Redis, with a clock the test moves. No server,
 * no Quarkus start: a test builds a kit, hands its works to {@link #pipeline()} and reads the
 * outcomes, the records and the metrics.
 *
 * <p>The database runs no SQL. A work under test sends its changes through a repository the test
 * replaces; the test's repository keeps its rows in memory and hands each change to
 * {@link Database#write}, so that it commits or rolls back with the key's record as it would in
 * Postgres. To test the SQL itself, test the work with {@code @QuarkusTest} against a real database.
 *
 * <p>A kit is for one test: it keeps its state, and is safe to use from several threads.
 */
public final class PipelineKit {

    private final PipelineRig rig;
    private final Redis redis;
    private final Database database;

    /** A kit with the extension's defaults: what a service with no {@code idem.pipeline.*} property runs. */
    public PipelineKit() {
        this(Map.of());
    }

    /**
     * A kit configured as a service with these properties in its {@code application.properties}:
     * {@code idem.pipeline.*} names, such as {@code idem.pipeline.scopes.gift-card-issue.redis-ttl}
     * to {@code 1h}; the rest keep their defaults. A name the pipeline does not know fails here, as
     * it fails a service's start.
     */
    public PipelineKit(Map<String, String> properties) {
        this.rig = new PipelineRig(Map.copyOf(properties));
        this.redis = new Redis(rig.cache);
        this.database = new Database(rig.db);
    }

    /**
     * The pipeline: in a service, the {@link IdempotencyPipeline} bean that entry points inject.
     * Its {@code execute} and {@code executeAll} run a work under a key as they would in production.
     */
    public IdempotencyPipeline pipeline() {
        return rig.pipeline;
    }

    /**
     * The pipeline's clock: in a service, its {@link java.time.Clock} bean. It starts at
     * 2025-03-01T10:00:00Z and stands still until the test moves it; Redis entries expire, leases
     * run out and records age by it.
     */
    public MovableClock clock() {
        return rig.clock;
    }

    /** The in-memory Redis, which stands for the Redis that holds the keys' pre-check entries. */
    public Redis redis() {
        return redis;
    }

    /** The in-memory database, which stands for the Postgres that holds the keys' dedup records. */
    public Database database() {
        return database;
    }

    /**
     * Registers the two-phase work of {@code scope}, which {@link IdempotencyPipeline#executeTwoPhase}
     * runs: in a service, the {@link TwoPhaseWork} bean annotated {@code @TwoPhaseScope(scope)}.
     */
    public void twoPhase(String scope, TwoPhaseWork work) {
        rig.twoPhaseWorks.put(Objects.requireNonNull(scope, "scope"), Objects.requireNonNull(work, "work"));
    }

    /**
     * The registry the pipeline counts in: in a service, Micrometer's, which Prometheus scrapes.
     * Meters have Micrometer's names: {@code idem.pipeline.outcomes} is scraped as
     * {@code idem_pipeline_outcomes_total}.
     */
    public MeterRegistry meters() {
        return rig.registry;
    }

    /**
     * The sum of the counters named {@code name} with these tags, as name-value pairs: for example
     * {@code counted("idem.pipeline.outcomes", "scope", "gift-card-issue", "outcome", "DUPLICATE")};
     * 0 when none was counted.
     */
    public double counted(String name, String... tags) {
        return rig.count(name, tags);
    }

    /**
     * The item of {@code uni}, waiting at most ten seconds for it; the failure of {@code uni} is
     * thrown. In a service the pipeline's answers are awaited by the entry point (a REST response,
     * a Kafka acknowledgement); every answer of the kit is ready at once.
     */
    public static <T> T await(Uni<T> uni) {
        return uni.await().atMost(Duration.ofSeconds(10));
    }

    /**
     * The in-memory Redis: a key's entry is claimed by the first pre-check, marked DONE with the
     * result once the record committed, and expires when the kit's clock passes its scope's
     * {@code redis-ttl} (26 hours unless configured).
     */
    public static final class Redis {

        private final InMemoryDedupCache cache;

        Redis(InMemoryDedupCache cache) {
            this.cache = cache;
        }

        /** Every entry is lost: in production, a {@code FLUSHALL} or a failover that lost writes. */
        public void flush() {
            cache.flush();
        }

        /**
         * The key's entry is deleted and its record stays: in production, a {@code DEL} of the entry
         * or its eviction under memory pressure.
         */
        public void forget(String scope, String key) {
            await(cache.forget(scope, key));
        }

        /**
         * Redis fails or answers slower than its budget, until {@link #comeBack}: every pre-check is
         * unavailable, so the database decides, and no entry is written.
         */
        public void goDown() {
            cache.goDown();
        }

        /** Redis answers again, with the entries it held before it went down that have not expired. */
        public void comeBack() {
            cache.comeBack();
        }
    }

    /**
     * The in-memory database: the {@code dedup_record} table and the transactions the pipeline runs,
     * with Postgres's semantics (a transaction's writes are seen by others once it commits; a
     * rollback drops them). It runs no SQL: a connection it gives a work fails every query.
     */
    public static final class Database {

        private final InMemoryDatabase db;

        Database(InMemoryDatabase db) {
            this.db = db;
        }

        /**
         * A change of the test's repository, made in the transaction of {@code tx} (the connection
         * the work received): run when that transaction commits, never if it rolls back (when the
         * key turns out to have a record, say). It counts as a statement the work sent, and fails
         * as one would: while the database is down, or after another statement of the transaction
         * failed. In production it stands for the repository's statement sent through {@code tx}.
         */
        public Uni<Void> write(SqlConnection tx, Runnable change) {
            return db.atCommit(tx, change);
        }

        /**
         * The database is unreachable until {@link #comeBack}: every transaction fails, so every
         * delivery that reaches the database fails, a failure {@link IdempotencyPipeline#isTransient}
         * calls transient (a service answers 503 or retries the Kafka record).
         */
        public void goDown() {
            db.faults.goDown();
        }

        /** The database is back, with every record and change that committed before it went down. */
        public void comeBack() {
            db.faults.comeBack();
        }

        /** The committed record of the key in {@code scope}, if it has one: a row of {@code dedup_record}. */
        public Optional<KeyRecord> record(String scope, String key) {
            return Optional.ofNullable(db.committedRecords().get(DedupStore.batchKey(scope, key))).map(stored -> KeyRecord.of(stored.record()));
        }

        /** The committed record of the request's key, if it has one. */
        public Optional<KeyRecord> record(IdemRequest request) {
            return record(request.scope(), request.key());
        }

        /**
         * How many transactions the pipeline began, committed or not: a duplicate that Redis answers
         * needs none.
         */
        public int transactions() {
            return db.transactions().size();
        }
    }

    /**
     * A committed row of {@code dedup_record}: the key, its status, the fingerprint of the payload
     * it was first delivered with, and the result its duplicates are answered with (null while
     * PROCESSING).
     */
    public record KeyRecord(String scope, String key, Status status, String fingerprint, JsonObject result) {

        /** The record's state, the column {@code status}. */
        public enum Status {
            /** Claimed by a two-phase work whose effect is not confirmed yet. */
            PROCESSING,
            /** The work took effect; duplicates are answered with the result. */
            DONE,
            /** A two-phase work failed its last attempt; a person has to look at it. */
            FAILED
        }

        static KeyRecord of(DedupRecord record) {
            return new KeyRecord(record.scope(), record.key(), Status.valueOf(record.status().name()),
                    record.fingerprint(), record.result());
        }
    }
}
