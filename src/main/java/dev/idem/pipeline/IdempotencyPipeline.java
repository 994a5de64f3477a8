package dev.idem.pipeline;

import dev.idem.pipeline.DedupStore.Claim;
import dev.idem.pipeline.RedisGuard.PreCheck;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Transaction;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Instant;

/**
 * The one path every entry point takes: Redis pre-check, then a claim on the unique dedup key in
 * the same transaction as the business work, then DONE in Redis once the database committed.
 * Failures of Postgres are not outcomes: they fail the Uni, and the caller retries or answers 503.
 */
@ApplicationScoped
public class IdempotencyPipeline {

    /** A claim that finds a row which then vanishes (archived meanwhile) is tried again, once. */
    private static final int CLAIM_ATTEMPTS = 2;

    private final RedisGuard redis;
    private final DedupStore store;
    private final Pool pool;
    private final PipelineConfig config;
    private final DedupConfig dedup;
    private final PipelineMetrics metrics;
    private final Clock clock;

    IdempotencyPipeline(RedisGuard redis, DedupStore store, Pool pool, PipelineConfig config,
                        DedupConfig dedup, PipelineMetrics metrics, Clock clock) {
        this.redis = redis;
        this.store = store;
        this.pool = pool;
        this.config = config;
        this.dedup = dedup;
        this.metrics = metrics;
        this.clock = clock;
    }

    public Uni<Outcome> execute(IdemRequest request, Work work) {
        return redis.preCheck(request)
                .chain(pre -> pre instanceof PreCheck.Done done
                        ? Uni.createFrom().item(fromRedis(request, done))
                        : inDatabase(request, work))
                .invoke(outcome -> metrics.outcome(request.scope(), outcome));
    }

    private static Outcome fromRedis(IdemRequest request, PreCheck.Done done) {
        return done.fingerprint().equals(request.fingerprint())
                ? new Outcome.Duplicate(Layer.REDIS, done.result())
                : new Outcome.KeyReused();
    }

    private Uni<Outcome> inDatabase(IdemRequest request, Work work) {
        return pool.withConnection(conn -> conn.begin().chain(tx -> decide(conn, request, work, CLAIM_ATTEMPTS)
                        .call(decision -> decision.commit() ? tx.commit() : tx.rollback())
                        .onFailure().call(() -> rollbackQuietly(tx))))
                .call(decision -> decision.cacheable() ? redis.markDone(request, decision.stored())
                        : Uni.createFrom().voidItem())
                .map(Decision::outcome);
    }

    private Uni<Decision> decide(SqlConnection tx, IdemRequest request, Work work, int attemptsLeft) {
        Instant now = clock.instant();
        Instant expiresAt = now.plus(config.retention(request.scope()).orElse(dedup.retention()));
        return store.claim(tx, request, now, now, expiresAt, config.concurrentWait(request.scope()))
                .chain(claim -> switch (claim) {
                    case CLAIMED -> work.run(tx).chain(effect -> record(tx, request, effect));
                    case LOCKED -> Uni.createFrom().item(Decision.rollback(
                            new Outcome.InFlight(config.inFlightRetryAfter())));
                    case EXISTS -> existing(tx, request, work, attemptsLeft);
                });
    }

    private Uni<Decision> existing(SqlConnection tx, IdemRequest request, Work work, int attemptsLeft) {
        return store.find(tx, request.scope(), request.key()).chain(found -> {
            if (found.isPresent()) {
                return Uni.createFrom().item(judge(request, found.get()));
            }
            return attemptsLeft > 1
                    ? decide(tx, request, work, attemptsLeft - 1)
                    : Uni.createFrom().item(Decision.rollback(new Outcome.InFlight(config.inFlightRetryAfter())));
        });
    }

    /** The first delivery's effect becomes the key's stored result, in the same transaction. */
    private Uni<Decision> record(SqlConnection tx, IdemRequest request, Effect effect) {
        if (effect instanceof Effect.Refused refused) {
            return Uni.createFrom().item(Decision.rollback(new Outcome.Rejected(refused.reason(), refused.detail())));
        }
        Outcome outcome;
        JsonObject stored;
        if (effect instanceof Effect.Applied applied) {
            stored = applied.result();
            outcome = new Outcome.Processed(stored);
        } else if (effect instanceof Effect.AlreadyApplied already) {
            stored = already.result();
            outcome = new Outcome.Duplicate(Layer.STATE, stored);
        } else {
            Effect.Anomalous anomalous = (Effect.Anomalous) effect;
            stored = anomalous.result();
            outcome = new Outcome.Anomaly(anomalous.kind(), stored);
        }
        return store.complete(tx, request, stored, clock.instant())
                .replaceWith(Decision.commit(outcome, stored));
    }

    /** A committed row that another delivery wrote: same payload or not, finished or not. */
    private Decision judge(IdemRequest request, DedupRecord existing) {
        if (!existing.fingerprint().equals(request.fingerprint())) {
            return Decision.rollback(new Outcome.KeyReused());
        }
        return switch (existing.status()) {
            case DONE -> Decision.refreshCache(new Outcome.Duplicate(Layer.DB, existing.result()), existing.result());
            case PROCESSING -> Decision.rollback(new Outcome.InFlight(config.inFlightRetryAfter()));
            case FAILED -> Decision.rollback(new Outcome.Rejected("FAILED", "the work for this key failed for good"));
        };
    }

    private static Uni<Void> rollbackQuietly(Transaction tx) {
        return tx.rollback().onFailure().recoverWithNull();
    }

    /** How a transaction ends and what Redis learns afterwards. */
    private record Decision(Outcome outcome, boolean commit, JsonObject stored) {
        static Decision commit(Outcome outcome, JsonObject stored) {
            return new Decision(outcome, true, stored);
        }

        /** Nothing was written but the row is DONE: tell Redis, so the next duplicate stops there. */
        static Decision refreshCache(Outcome outcome, JsonObject stored) {
            return new Decision(outcome, false, stored);
        }

        static Decision rollback(Outcome outcome) {
            return new Decision(outcome, false, null);
        }

        boolean cacheable() {
            return stored != null;
        }
    }
}
