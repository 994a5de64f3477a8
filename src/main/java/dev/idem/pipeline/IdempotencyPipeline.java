package dev.idem.pipeline;

import dev.idem.pipeline.DedupStore.Claim;
import dev.idem.pipeline.RedisGuard.PreCheck;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.function.Function;

/**
 * The one path every entry point takes: Redis pre-check, then the business work and the key's
 * dedup record (written once, DONE, on the unique key) in one transaction, then DONE in Redis once
 * the database committed. The database step goes through {@link GroupCommit}, which lets
 * deliveries that wait at the same time share one transaction. Failures of Postgres are not
 * outcomes: they fail the Uni, and the caller retries or answers 503.
 *
 * <p>Work whose effect lies outside the database takes the two-phase variant of the same path
 * ({@link #executeTwoPhase}): the claim commits alone, as PROCESSING under a lease; the effect
 * runs carrying the key; a second transaction confirms DONE together with the local business
 * change, by compare-and-set on the lease. A record left PROCESSING past its lease (a crash, a
 * hang, a failed attempt) is taken over by a duplicate or by {@link HangingRecords}.
 */
@ApplicationScoped
public class IdempotencyPipeline {

    /** A claim that finds a row which then vanishes (archived meanwhile) is tried again, once. */
    private static final int CLAIM_ATTEMPTS = 2;

    private final RedisGuard redis;
    private final GroupCommit groups;
    private final DedupStore store;
    private final Pool pool;
    private final PipelineConfig config;
    private final DedupConfig dedup;
    private final PipelineMetrics metrics;
    private final Clock clock;
    private final TwoPhaseConfig twoPhase;
    private final TwoPhaseHandlers handlers;
    private final TwoPhaseMetrics twoPhaseMetrics;

    IdempotencyPipeline(RedisGuard redis, GroupCommit groups, DedupStore store, Pool pool, PipelineConfig config,
                        DedupConfig dedup, PipelineMetrics metrics, Clock clock,
                        TwoPhaseConfig twoPhase, TwoPhaseHandlers handlers, TwoPhaseMetrics twoPhaseMetrics) {
        this.redis = redis;
        this.groups = groups;
        this.store = store;
        this.pool = pool;
        this.config = config;
        this.dedup = dedup;
        this.metrics = metrics;
        this.clock = clock;
        this.twoPhase = twoPhase;
        this.handlers = handlers;
        this.twoPhaseMetrics = twoPhaseMetrics;
    }

    /**
     * One-phase mode: {@code work} and the key's record in one transaction. A key Redis did not
     * claim for this delivery may have its record already: that is looked up before the work runs.
     */
    public Uni<Outcome> execute(IdemRequest request, Work work) {
        return guarded(request, pre ->
                groups.submit(new GroupTransaction.Pending(request, work, !(pre instanceof PreCheck.Claimed))));
    }

    /**
     * Two-phase mode: runs the {@link TwoPhaseWork} registered for the request's scope, with
     * {@code payload} stored in the record so that recovery can run the effect again. A delivery
     * that finds the key within its lease is IN_FLIGHT; one that finds it hanging takes it over.
     * The first delivery is PROCESSED once the effect is confirmed, IN_FLIGHT when its attempt
     * failed and will be tried again, REJECTED (FAILED) when it was the last attempt.
     */
    public Uni<Outcome> executeTwoPhase(IdemRequest request, JsonObject payload) {
        TwoPhaseWork work = handlers.forScope(request.scope()).orElseThrow(() ->
                new IllegalStateException("no two-phase handler for scope " + request.scope()));
        TwoPhase claimant = new TwoPhase(request, payload);
        return guarded(request, pre -> transact(request, tx -> decide(tx, request, claimant, CLAIM_ATTEMPTS))
                .chain(decision -> decision.acquired() == null
                        ? Uni.createFrom().item(decision.outcome())
                        : attempt(work, decision.acquired())));
    }

    /**
     * Recovery's step for one hanging record: take it over and run its effect again, or give it
     * up when it had all its attempts. Racing another process for the record is safe: the
     * compare-and-set on the lease lets exactly one of them act.
     */
    Uni<Resumption> resume(DedupRecord hanging) {
        Optional<TwoPhaseWork> work = handlers.forScope(hanging.scope());
        if (work.isEmpty()) {
            Log.errorf("ALERT hanging record %s/%s has no two-phase handler in this service", hanging.scope(),
                    hanging.key());
            return Uni.createFrom().item(Resumption.UNHANDLED);
        }
        return seize(pool, hanging).chain(seized -> {
            if (seized.gaveUp()) {
                return Uni.createFrom().item(Resumption.GAVE_UP);
            }
            if (seized.lease() == null) {
                return Uni.createFrom().item(Resumption.LOST);
            }
            return attempt(work.get(), seized.lease()).map(outcome -> outcome.accept(Resumption.AFTER_TAKEOVER));
        });
    }

    /** Redis first; the database, told what Redis found, only when Redis cannot answer. */
    private Uni<Outcome> guarded(IdemRequest request, Function<PreCheck, Uni<Outcome>> database) {
        return redis.preCheck(request)
                .chain(pre -> pre instanceof PreCheck.Done done
                        ? Uni.createFrom().item(Verdicts.ofRedis(request, done))
                        : database.apply(pre))
                .invoke(outcome -> metrics.outcome(request.scope(), outcome));
    }

    /**
     * One transaction on one connection; Redis hears DONE only after the commit, and the answer
     * does not wait for Redis: a duplicate meanwhile finds the row.
     */
    private Uni<Decision> transact(IdemRequest request, Function<SqlConnection, Uni<Decision>> decide) {
        return Transactions.run(pool, decide, decision -> decision.commit())
                .invoke(decision -> {
                    if (decision.cacheable()) {
                        redis.markDone(request, decision.stored()).subscribe().with(ignored -> {});
                    }
                });
    }

    private Uni<Decision> decide(SqlConnection tx, IdemRequest request, TwoPhase claimant, int attemptsLeft) {
        Instant now = clock.instant();
        Instant leaseUntil = claimant.leaseUntil(now);
        Instant expiresAt = now.plus(config.retention(request.scope(), dedup));
        return store.claim(tx, request, now, leaseUntil, expiresAt, config.concurrentWait(request.scope()),
                        claimant.payload())
                .chain(claim -> switch (claim) {
                    case CLAIMED -> claimant.claimed(tx, leaseUntil);
                    case LOCKED -> Uni.createFrom().item(Decision.rollback(inFlight()));
                    case EXISTS -> existing(tx, request, claimant, attemptsLeft);
                });
    }

    private Uni<Decision> existing(SqlConnection tx, IdemRequest request, TwoPhase claimant, int attemptsLeft) {
        return store.find(tx, request.scope(), request.key()).chain(found -> {
            if (found.isPresent()) {
                return claimant.existing(tx, found.get());
            }
            return attemptsLeft > 1
                    ? decide(tx, request, claimant, attemptsLeft - 1)
                    : Uni.createFrom().item(Decision.rollback(inFlight()));
        });
    }

    /**
     * The work's effect becomes the key's stored result in the transaction that {@code complete}
     * writes it in; {@code complete} answering false (a two-phase lease lost meanwhile) rolls back.
     */
    private Uni<Decision> record(Effect effect, Function<JsonObject, Uni<Boolean>> complete) {
        Outcome outcome = Verdicts.ofEffect(effect);
        JsonObject stored = Verdicts.stored(effect);
        if (stored == null) {
            return Uni.createFrom().item(Decision.rollback(outcome));
        }
        return complete.apply(stored).map(completed -> completed
                ? Decision.commit(outcome, stored)
                : Decision.rollback(inFlight()));
    }

    /** A committed row that another delivery wrote; a DONE one refreshes Redis. */
    private Decision judge(IdemRequest request, DedupRecord existing) {
        Outcome outcome = Verdicts.ofExisting(request, existing, inFlight());
        return outcome instanceof Outcome.Duplicate duplicate
                ? Decision.refreshCache(duplicate, duplicate.result())
                : Decision.rollback(outcome);
    }

    // --- two-phase: attempts under a lease ------------------------------------------------------

    /** One run of the effect under {@code lease}, then its confirmation or the record of its failure. */
    private Uni<Outcome> attempt(TwoPhaseWork work, Lease lease) {
        return Uni.createFrom().deferred(() -> work.perform(lease.request().key(), lease.payload()))
                // the effect's own timeout comes first; this bound only keeps a broken one from holding on
                .ifNoItem().after(twoPhase.lease()).fail()
                .onItemOrFailure().transformToUni((performed, failure) -> failure == null
                        ? confirm(work, lease, performed)
                        : failed(lease, failure.toString()));
    }

    /** DONE and the local business change in one transaction, if {@code lease} still holds the record. */
    private Uni<Outcome> confirm(TwoPhaseWork work, Lease lease, JsonObject performed) {
        IdemRequest request = lease.request();
        return transact(request, tx -> work.confirm(tx, request.key(), lease.payload(), performed)
                        .chain(effect -> record(effect, stored -> store.confirm(tx, lease, stored, clock.instant()))))
                .chain(decision -> decision.outcome() instanceof Outcome.Rejected refused
                        ? failed(lease, "refused at confirmation: " + refused.reason() + ": " + refused.detail())
                        : Uni.createFrom().item(decision.outcome()));
    }

    /** The attempt failed for sure: try again after the retry delay, or give up after the last attempt. */
    private Uni<Outcome> failed(Lease lease, String error) {
        IdemRequest request = lease.request();
        Instant now = clock.instant();
        if (lease.attempt() >= twoPhase.maxAttempts()) {
            return store.fail(pool, lease, error, now).map(failed -> {
                if (!failed) {
                    return inFlight(); // taken over meanwhile: its new holder decides
                }
                gaveUp(request, lease.attempt(), error);
                return failedForGood();
            });
        }
        return store.retryLater(pool, lease, leaseEnd(now, twoPhase.retryDelay()), error, now).map(released -> {
            if (released) {
                Log.warnf("%s %s: attempt %d of %d failed, to be tried again: %s", request.scope(), request.key(),
                        lease.attempt(), twoPhase.maxAttempts(), error);
            }
            return inFlight();
        });
    }

    /**
     * A hanging record passes to the caller as one more attempt, or becomes FAILED when it had
     * all its attempts; empty-handed when another process was first.
     */
    private Uni<Seized> seize(SqlClient client, DedupRecord hanging) {
        Instant now = clock.instant();
        IdemRequest request = new IdemRequest(hanging.scope(), hanging.key(), hanging.fingerprint());
        Lease seen = new Lease(request, null, hanging.leaseUntil(), hanging.attempts());
        if (hanging.attempts() >= twoPhase.maxAttempts()) {
            String error = "attempt " + hanging.attempts() + " never finished within its lease";
            return store.fail(client, seen, error, now).map(failed -> {
                if (failed) {
                    gaveUp(request, hanging.attempts(), error);
                }
                return failed ? Seized.GAVE_UP : Seized.LOST;
            });
        }
        return store.takeOver(client, seen, leaseEnd(now, twoPhase.lease()), now).map(taken -> taken
                .map(lease -> {
                    twoPhaseMetrics.takeover(request.scope());
                    Log.warnf("%s %s: hanging since %s, taken over as attempt %d", request.scope(), request.key(),
                            hanging.leaseUntil(), lease.attempt());
                    return new Seized(lease, false);
                })
                .orElse(Seized.LOST));
    }

    private void gaveUp(IdemRequest request, int attempts, String error) {
        twoPhaseMetrics.failed(request.scope());
        Log.errorf("ALERT %s %s FAILED after %d attempts: %s", request.scope(), request.key(), attempts, error);
    }

    /** Leases are compared for equality in SQL, so they are kept at the precision of timestamptz. */
    private static Instant leaseEnd(Instant now, Duration length) {
        return now.plus(length).truncatedTo(ChronoUnit.MICROS);
    }

    private Outcome inFlight() {
        return Verdicts.inFlight(config);
    }

    private static Outcome failedForGood() {
        return Verdicts.failedForGood();
    }

    /** The claim commits alone, under a lease; the effect runs after the commit. */
    private final class TwoPhase {
        private final IdemRequest request;
        private final JsonObject payload;

        TwoPhase(IdemRequest request, JsonObject payload) {
            this.request = request;
            this.payload = payload;
        }

        Instant leaseUntil(Instant now) {
            return leaseEnd(now, twoPhase.lease());
        }

        JsonObject payload() {
            return payload;
        }

        Uni<Decision> claimed(SqlConnection tx, Instant leaseUntil) {
            return Uni.createFrom().item(Decision.acquired(new Lease(request, payload, leaseUntil, 1)));
        }

        /** Within its lease the record is IN_FLIGHT; past it, this delivery takes it over. */
        Uni<Decision> existing(SqlConnection tx, DedupRecord record) {
            boolean hanging = record.status() == DedupRecord.Status.PROCESSING
                    && record.leaseUntil().isBefore(clock.instant());
            if (!hanging || !record.fingerprint().equals(request.fingerprint())) {
                return Uni.createFrom().item(judge(request, record));
            }
            return seize(tx, record).map(seized -> {
                if (seized.gaveUp()) {
                    return Decision.settle(failedForGood());
                }
                return seized.lease() == null ? Decision.rollback(inFlight()) : Decision.acquired(seized.lease());
            });
        }
    }

    /** What an attempt to seize a hanging record got: its lease, its end (FAILED), or nothing. */
    private record Seized(Lease lease, boolean gaveUp) {
        static final Seized LOST = new Seized(null, false);
        static final Seized GAVE_UP = new Seized(null, true);
    }

    /** How a transaction ends, what Redis learns afterwards, and whether an effect is to run. */
    private record Decision(Outcome outcome, boolean commit, JsonObject stored, Lease acquired) {
        static Decision commit(Outcome outcome, JsonObject stored) {
            return new Decision(outcome, true, stored, null);
        }

        /** Nothing was written but the row is DONE: tell Redis, so the next duplicate stops there. */
        static Decision refreshCache(Outcome outcome, JsonObject stored) {
            return new Decision(outcome, false, stored, null);
        }

        static Decision rollback(Outcome outcome) {
            return new Decision(outcome, false, null, null);
        }

        /** Written, but not a result Redis may answer duplicates with. */
        static Decision settle(Outcome outcome) {
            return new Decision(outcome, true, null, null);
        }

        /** The key is held under {@code lease}: commit, then run the effect outside the transaction. */
        static Decision acquired(Lease lease) {
            return new Decision(null, true, null, lease);
        }

        boolean cacheable() {
            return stored != null;
        }
    }
}
