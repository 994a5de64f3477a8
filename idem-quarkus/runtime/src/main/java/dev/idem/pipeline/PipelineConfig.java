package dev.idem.pipeline;

import io.quarkus.runtime.annotations.ConfigDocMapKey;
import io.quarkus.runtime.annotations.ConfigDocSection;
import io.quarkus.runtime.annotations.ConfigPhase;
import io.quarkus.runtime.annotations.ConfigRoot;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The pipeline's one configuration root, {@code idem.pipeline.*}, with per-scope overrides. */
@ConfigMapping(prefix = "idem.pipeline")
@ConfigRoot(phase = ConfigPhase.RUN_TIME)
public interface PipelineConfig {

    /**
     * Prefix of every Redis key the pipeline writes, so that services sharing a Redis keep their
     * keys apart. By default the application's name as it was built: {@code quarkus.application.name}
     * is fixed at build time, and setting it at run time changes nothing here; set this key instead.
     */
    @WithDefault("${quarkus.application.name:idem}")
    String redisPrefix();

    /**
     * Whether the pipeline puts its tables ({@code dedup_record}, {@code dedup_record_archive}) in
     * place at start-up, through the reactive pool. By default it does, unless the service's Flyway
     * reads {@code db/idem} (then Flyway does).
     */
    Optional<Boolean> createTables();

    /**
     * Longest a Redis call may take before the pipeline goes on without Redis (counted in
     * {@code idem_redis_degraded_total}).
     */
    @WithDefault("100ms")
    Duration redisBudget();

    /**
     * The same bound for the Redis script call of a batch (a Kafka poll's). No client waits on a
     * batch, and a script runs hundreds of commands; the bound only keeps a hung Redis from
     * holding a partition.
     */
    @WithDefault("1s")
    Duration redisBatchBudget();

    /**
     * Redis TTL of a scope without its own; must outlast the source's retry window (a payment
     * gateway retries its notifications for about 25 hours).
     */
    @WithDefault("26h")
    Duration redisTtl();

    /**
     * How long dedup records stay in the hot table before they are archived. It must exceed every
     * retry window and every Redis TTL: the service refuses to start otherwise.
     */
    @WithDefault("7d")
    Duration retention();

    /** What a client is told to wait when its key is still being worked on. */
    @WithDefault("1s")
    Duration inFlightRetryAfter();

    /**
     * A work that takes longer than this in its transaction is logged (once a minute per scope):
     * the deliveries sharing the transaction wait as long, and its row locks are held.
     */
    @WithDefault("1s")
    Duration slowWork();

    /**
     * How often a Kafka record whose work fails is applied before it goes to the dead-letter topic.
     * Only failures that would come again count (the work threw, the database refused one of its
     * statements); while the database is away a record is retried for as long as it takes.
     */
    @WithDefault("5")
    int workAttempts();

    /**
     * Kafka channels whose records are read strictly: a member the record's type does not declare
     * dead-letters the record. Every other channel ignores such members, as a consumer must while
     * its producers add members on their own schedule.
     */
    Optional<List<String>> strictChannels();

    // a group's first sentence, up to its first period, titles its section in docs/config.md
    /** Group commit: deliveries that wait for the database at the same time share one transaction. */
    @ConfigDocSection
    GroupCommit groupCommit();

    /**
     * Two-phase records (work with an effect outside the database): how long a claim or a
     * takeover holds a record before others may take it over. It must outlast the effect (an
     * external call and its timeout) and the confirmation.
     */
    @WithDefault("30s")
    Duration lease();

    /**
     * Effect runs per two-phase record (the claim's and every takeover's); past them it is FAILED,
     * until an operator runs it again ({@code DedupAdmin.redriveFailed}).
     */
    @WithDefault("5")
    int maxAttempts();

    /** After an attempt failed for sure (an error, not a crash), when the record may be tried again. */
    @WithDefault("5s")
    Duration retryDelay();

    /**
     * How often hanging records (two-phase records still PROCESSING after their lease) are looked
     * for and taken over: a duration such as {@code 10s}, or {@code off} for only when an operator
     * asks ({@code DedupAdmin.redriveHanging()}).
     */
    @WithDefault("10s")
    String recoveryInterval();

    /** Hanging records taken over per recovery run, and per {@code DedupAdmin.redriveHanging()}. */
    @WithDefault("100")
    int recoveryBatchSize();

    /** Hanging records re-driven at the same time within one run. */
    @WithDefault("4")
    int recoveryConcurrency();

    /**
     * Redis keys read per reconciliation ({@code DedupAdmin.findings}, {@code dropMarksWithoutRecord})
     * looking for DONE marks without a record (a commit acknowledged and then lost, as in a failover
     * to a standby that had not received it). Past this many, the check sees a part of Redis.
     */
    @WithDefault("100000")
    int markScanLimit();

    /** Archiving: records past their retention move out of the hot table. */
    @ConfigDocSection
    Archive archive();

    /** REST endpoints annotated @Idempotent. Their keys: {@code idem.pipeline.http.*}. */
    @ConfigDocSection
    Http http();

    /** Per-scope overrides, under the scope's name. Their keys: {@code idem.pipeline.scopes."<scope>".*}. */
    @ConfigDocSection
    @ConfigDocMapKey("scope")
    Map<String, Scope> scopes();

    interface GroupCommit {
        /** The most deliveries in one transaction (1: every delivery its own). */
        @WithDefault("32")
        int maxSize();

        /**
         * The most transactions of gathered deliveries in flight at once, per event loop. A delivery
         * that finds them all busy waits for the next one and shares it with whatever else waits; an
         * idle service starts it at once.
         */
        @WithDefault("2")
        int inFlight();

        /**
         * Whether each loop keeps between 1 and {@code in-flight}, the count under which deliveries
         * settle fastest, tried again every few seconds ({@code idem_pipeline_group_in_flight} says
         * which), or always {@code in-flight}. A second transaction helps where commits are dear (a
         * slow fsync, a synchronous standby) and costs where they are cheap and the cores busy.
         */
        @WithDefault("true")
        boolean tuneInFlight();
    }

    interface Http {
        /** The request header that carries the key. */
        @WithDefault("Idempotency-Key")
        String keyHeader();

        /**
         * A request header naming the caller (such as {@code X-User-Id}, set by the gateway that
         * authenticated the user): each caller's keys are its own, and a request without it is
         * answered 401. Absent: the authenticated user's name when there is one, else keys are
         * shared by every caller.
         */
        Optional<String> callerHeader();

        /** Response headers stored with an answer and replayed with it ({@code Content-Type} always is). */
        @WithDefault("Location")
        List<String> replayedHeaders();
    }

    interface Archive {
        /**
         * How often records past their retention are moved: a duration such as {@code 10m}, or
         * {@code off} for only when an operator asks ({@code DedupAdmin.archiveNow()}).
         */
        @WithDefault("10m")
        String interval();

        /** Rows moved per statement: small enough that no lock is held for long. */
        @WithDefault("500")
        int batchSize();

        /** Batches per run at most, so one run stays bounded; the next run goes on. */
        @WithDefault("200")
        int maxBatches();
    }

    interface Scope {
        /** Redis TTL of this scope's keys; {@code idem.pipeline.redis-ttl} when absent. */
        Optional<Duration> redisTtl();

        /** Dedup retention of this scope; {@code idem.pipeline.retention} when absent. */
        Optional<Duration> retention();

        /**
         * How long a request waits for a concurrent one holding the same key. Absent: it waits
         * for the other transaction and then sees its outcome; present: after this long it is
         * answered IN_FLIGHT (409 at a REST endpoint). The scope of an {@code @Idempotent}
         * endpoint has {@code 200ms} unless configured otherwise; other scopes have none.
         */
        Optional<Duration> concurrentWait();

        /**
         * Whether a refusal of this scope's work ({@code Effect.Rejected}) is the key's answer,
         * stored and given again to every later delivery of the key (Stripe's rule: a declined
         * request retried after the world changed is still declined, until a new key is used).
         * {@code false}: nothing is stored, and a retry runs the work again.
         */
        @WithDefault("true")
        boolean storeRefusals();
    }

    /** How long Redis remembers a key of {@code scope}: its own {@code redis-ttl}, else {@link #redisTtl()}. */
    default Duration redisTtl(String scope) {
        Scope s = scopes().get(scope);
        return s == null ? redisTtl() : s.redisTtl().orElse(redisTtl());
    }

    /** How long a delivery of {@code scope} waits for a concurrent one holding its key, if bounded. */
    default Optional<Duration> concurrentWait(String scope) {
        Scope s = scopes().get(scope);
        return s == null ? Optional.empty() : s.concurrentWait();
    }

    /** Whether a refusal of {@code scope}'s work is stored as its key's answer (by default it is). */
    default boolean storesRefusals(String scope) {
        Scope s = scopes().get(scope);
        return s == null || s.storeRefusals();
    }

    /** How long a record of {@code scope} is kept: its own retention, else {@link #retention()}. */
    default Duration retention(String scope) {
        Scope s = scopes().get(scope);
        return s == null ? retention() : s.retention().orElse(retention());
    }
}
