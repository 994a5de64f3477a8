package dev.idem.pipeline;

import dev.idem.pipeline.DeliveryTraces.DeliverySpan;
import dev.idem.pipeline.CacheFirst.Settled;
import dev.idem.pipeline.CacheFirst.Unanswered;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * The two-phase protocol, for work whose effect lies outside the database: the claim commits alone,
 * as PROCESSING under a lease; the effect runs carrying the key; a second transaction confirms DONE
 * together with the local business change, by compare-and-set on the lease. A record left PROCESSING
 * past its lease (a crash, a hang, a failed attempt) is taken over by a duplicate or by
 * {@link HangingRecords}. Around it run the steps both protocols share ({@link CacheFirst}): the
 * Redis pre-check, the DONE mark after commit, the claim given back, the outcome metric.
 */
@ApplicationScoped
class TwoPhase {

    private static final Logger LOG = Logger.getLogger(TwoPhase.class);

    /** A claim that finds a row which then vanishes (archived meanwhile) is tried again, once. */
    private static final int CLAIM_ATTEMPTS = 2;

    private final CacheFirst cacheFirst;
    private final DedupStore store;
    private final PipelineConfig config;
    private final PipelineMetrics metrics;
    private final Clock clock;
    private final TwoPhaseHandlers handlers;

    TwoPhase(CacheFirst cacheFirst, DedupStore store, PipelineConfig config, PipelineMetrics metrics, Clock clock,
             TwoPhaseHandlers handlers) {
        this.cacheFirst = cacheFirst;
        this.store = store;
        this.config = config;
        this.metrics = metrics;
        this.clock = clock;
        this.handlers = handlers;
    }

    /**
     * Two-phase mode: runs the {@link TwoPhaseWork} registered for the request's scope, with
     * {@code payload} stored in the record so that recovery can run the effect again. A delivery
     * that finds the key within its lease is IN_FLIGHT; one that finds it hanging takes it over.
     * The first delivery is PROCESSED once the effect is confirmed, IN_FLIGHT when its attempt
     * failed and will be tried again, REJECTED (FAILED) when it was the last attempt.
     */
    Uni<Outcome> execute(IdemRequest request, JsonObject payload) {
        TwoPhaseWork work = handlers.forScope(request.scope()).orElseThrow(() ->
                new IllegalStateException("no two-phase work for scope " + request.scope()));
        Claiming claim = new Claiming(request, payload);
        return cacheFirst.run(List.of(request), unanswered -> store.transaction(
                                config.concurrentWait(request.scope()), tx -> decide(tx, request, claim, CLAIM_ATTEMPTS),
                                Decision::ending)
                        .chain(decision -> decision.acquired() == null
                                ? Uni.createFrom().item(decision.settled())
                                : attempt(work, decision.acquired(), unanswered.get(0).span()))
                        .map(settled -> List.<Settled>of(settled)), false)
                .map(outcomes -> outcomes.get(0));
    }

    /**
     * Recovery's step for one hanging record: take it over and run its effect again, or give it
     * up when it had all its attempts. Racing another process for the record is safe: the
     * compare-and-set on the lease lets exactly one of them act.
     */
    Uni<Resumption> resume(DedupRecord hanging) {
        Optional<TwoPhaseWork> work = handlers.forScope(hanging.scope());
        if (work.isEmpty()) {
            LOG.errorf("ALERT hanging record %s/%s has no two-phase work in this service", hanging.scope(),
                    hanging.key());
            return Uni.createFrom().item(Resumption.UNHANDLED);
        }
        return alone(tx -> seize(tx, hanging)).chain(seized -> {
            if (seized.gaveUp()) {
                return Uni.createFrom().item(Resumption.GAVE_UP);
            }
            if (seized.lease() == null) {
                return Uni.createFrom().item(Resumption.LOST);
            }
            IdemRequest request = seized.lease().request();
            return attempt(work.get(), seized.lease(), DeliverySpan.NONE)
                    .call(done -> cacheFirst.afterCommit(List.of(Unanswered.recovered(request)), List.of(done)))
                    .map(done -> done.outcome().accept(Resumption.AFTER_TAKEOVER));
        });
    }

    private Uni<Decision> decide(SqlConnection tx, IdemRequest request, Claiming claim, int attemptsLeft) {
        Instant now = clock.instant();
        Instant leaseUntil = claim.leaseUntil(now);
        Instant expiresAt = now.plus(config.retention(request.scope()));
        return store.claim(tx, request, now, leaseUntil, expiresAt, claim.payload())
                .chain(found -> switch (found) {
                    case WON -> claim.won(leaseUntil);
                    case LOCKED -> Uni.createFrom().item(Decision.rollback(Outcomes.inFlight(config)));
                    case EXISTS -> existing(tx, request, claim, attemptsLeft);
                });
    }

    private Uni<Decision> existing(SqlConnection tx, IdemRequest request, Claiming claim, int attemptsLeft) {
        return store.findAll(tx, List.of(request)).chain(found -> {
            DedupRecord record = found.get(DedupStore.batchKey(request));
            if (record != null) {
                return claim.existing(tx, record);
            }
            return attemptsLeft > 1
                    ? decide(tx, request, claim, attemptsLeft - 1)
                    : Uni.createFrom().item(Decision.rollback(Outcomes.inFlight(config)));
        });
    }

    /**
     * The work's effect becomes the key's stored result in the transaction that {@code complete}
     * writes it in; {@code complete} answering false (a two-phase lease lost meanwhile) rolls back.
     */
    private Uni<Decision> record(Effect effect, String trace, Function<JsonObject, Uni<Boolean>> complete) {
        Outcome outcome = Outcomes.ofEffect(effect);
        JsonObject stored = Outcomes.stored(effect, false, trace);   // a refusal at confirmation is a failed attempt
        if (stored == null) {
            return Uni.createFrom().item(Decision.rollback(outcome));
        }
        return complete.apply(stored).map(completed -> completed
                ? Decision.commit(outcome, stored)
                : Decision.rollback(Outcomes.inFlight(config)));
    }


    // --- two-phase: attempts under a lease ------------------------------------------------------

    /**
     * One run of the effect under {@code lease}, then its confirmation or the record of its failure;
     * {@code span}: the delivery's, whose trace the effect's calls join and the record keeps.
     */
    private Uni<Settled.Decided> attempt(TwoPhaseWork work, Lease lease, DeliverySpan span) {
        return Uni.createFrom().deferred(() -> span.current(() -> work.perform(lease.request().key(), lease.payload())))
                // the effect's own timeout comes first; this bound only keeps a broken one from holding on
                .ifNoItem().after(config.lease()).fail()
                .onItemOrFailure().transformToUni((performed, failure) -> failure == null
                        ? confirm(work, lease, performed, span.traceId())
                        : failed(lease, failure.toString()).map(outcome -> new Settled.Decided(outcome, null)));
    }

    /** DONE and the local business change in one transaction, if {@code lease} still holds the record. */
    private Uni<Settled.Decided> confirm(TwoPhaseWork work, Lease lease, JsonObject performed, String trace) {
        IdemRequest request = lease.request();
        return store.transaction(Optional.empty(), tx -> work.confirm(tx, request.key(), lease.payload(), performed)
                        .chain(effect -> record(effect, trace, stored -> store.confirm(tx, lease, stored, clock.instant()))),
                        Decision::ending)
                .chain(decision -> decision.settled().outcome() instanceof Outcome.Rejected refused
                        ? failed(lease, "refused at confirmation: " + refused.reason() + ": " + refused.detail())
                                .map(outcome -> new Settled.Decided(outcome, null))
                        : Uni.createFrom().item(decision.settled()));
    }

    /** The attempt failed for sure: try again after the retry delay, or give up after the last attempt. */
    private Uni<Outcome> failed(Lease lease, String error) {
        IdemRequest request = lease.request();
        Instant now = clock.instant();
        if (lease.attempt() >= config.maxAttempts()) {
            return alone(tx -> store.release(tx, lease, null, error, now)).map(failed -> {
                if (!failed) {
                    return Outcomes.inFlight(config); // taken over meanwhile: its new holder decides
                }
                gaveUp(request, lease.attempt(), error);
                return Outcomes.failedForGood();
            });
        }
        return alone(tx -> store.release(tx, lease, leaseEnd(now, config.retryDelay()), error, now)).map(released -> {
            if (released) {
                LOG.warnf("%s %s: attempt %d of %d failed, to be tried again: %s", request.scope(), request.key(),
                        lease.attempt(), config.maxAttempts(), error);
            }
            return Outcomes.inFlight(config);
        });
    }

    /**
     * A hanging record passes to the caller as one more attempt, or becomes FAILED when it had
     * all its attempts; empty-handed when another process was first.
     */
    private Uni<Seized> seize(SqlConnection client, DedupRecord hanging) {
        Instant now = clock.instant();
        IdemRequest request = new IdemRequest(hanging.scope(), hanging.key(), hanging.fingerprint());
        Lease seen = new Lease(request, null, hanging.leaseUntil(), hanging.attempts());
        if (hanging.attempts() >= config.maxAttempts()) {
            String error = "attempt " + hanging.attempts() + " never finished within its lease";
            return store.release(client, seen, null, error, now).map(failed -> {
                if (failed) {
                    gaveUp(request, hanging.attempts(), error);
                }
                return failed ? Seized.GAVE_UP : Seized.LOST;
            });
        }
        return store.takeOver(client, seen, leaseEnd(now, config.lease()), now).map(taken -> taken
                .map(lease -> {
                    metrics.takeover(request.scope());
                    LOG.warnf("%s %s: hanging since %s, taken over as attempt %d", request.scope(), request.key(),
                            hanging.leaseUntil(), lease.attempt());
                    return new Seized(lease, false);
                })
                .orElse(Seized.LOST));
    }

    /** Statements of their own, outside the protocol's transactions: in one of their own, committed. */
    private <T> Uni<T> alone(Function<SqlConnection, Uni<T>> statements) {
        return store.transaction(Optional.empty(), statements, done -> DedupStore.Ending.COMMIT);
    }

    private void gaveUp(IdemRequest request, int attempts, String error) {
        metrics.failed(request.scope());
        LOG.errorf("ALERT %s %s FAILED after %d attempts: %s", request.scope(), request.key(), attempts, error);
    }

    /** Leases are compared for equality in SQL, so they are kept at the precision of timestamptz. */
    private static Instant leaseEnd(Instant now, Duration length) {
        return now.plus(length).truncatedTo(ChronoUnit.MICROS);
    }

    /** The claim commits alone, under a lease; the effect runs after the commit. */
    private final class Claiming {
        private final IdemRequest request;
        private final JsonObject payload;

        Claiming(IdemRequest request, JsonObject payload) {
            this.request = request;
            this.payload = payload;
        }

        Instant leaseUntil(Instant now) {
            return leaseEnd(now, config.lease());
        }

        JsonObject payload() {
            return payload;
        }

        Uni<Decision> won(Instant leaseUntil) {
            return Uni.createFrom().item(Decision.acquired(new Lease(request, payload, leaseUntil, 1)));
        }

        /** Within its lease the record is IN_FLIGHT; past it, this delivery takes it over. */
        Uni<Decision> existing(SqlConnection tx, DedupRecord record) {
            boolean hanging = record.status() == DedupRecord.Status.PROCESSING
                    && record.leaseUntil().isBefore(clock.instant());
            if (!hanging || !record.fingerprint().equals(request.fingerprint())) {
                return Uni.createFrom().item(Decision.judged(Settled.Decided.found(request, record, config)));
            }
            return seize(tx, record).map(seized -> {
                if (seized.gaveUp()) {
                    return Decision.settle(Outcomes.failedForGood());
                }
                return seized.lease() == null ? Decision.rollback(Outcomes.inFlight(config)) : Decision.acquired(seized.lease());
            });
        }
    }

    /** What an attempt to seize a hanging record got: its lease, its end (FAILED), or nothing. */
    private record Seized(Lease lease, boolean gaveUp) {
        static final Seized LOST = new Seized(null, false);
        static final Seized GAVE_UP = new Seized(null, true);
    }

    /**
     * How a transaction ends: what became of the delivery (and what Redis may answer its duplicates
     * with), whether it commits, and the lease under which an effect is to run after it.
     */
    private record Decision(Settled.Decided settled, boolean commit, Lease acquired) {
        static Decision commit(Outcome outcome, JsonObject stored) {
            return new Decision(new Settled.Decided(outcome, JsonText.encode(stored)), true, null);
        }

        /** A row another delivery committed: nothing is written; a DONE one still tells Redis. */
        static Decision judged(Settled.Decided judged) {
            return new Decision(judged, false, null);
        }

        static Decision rollback(Outcome outcome) {
            return new Decision(new Settled.Decided(outcome, null), false, null);
        }

        /** Written, but not a result Redis may answer duplicates with. */
        static Decision settle(Outcome outcome) {
            return new Decision(new Settled.Decided(outcome, null), true, null);
        }

        /** The key is held under {@code lease}: commit, then run the effect outside the transaction. */
        static Decision acquired(Lease lease) {
            return new Decision(null, true, lease);
        }

        DedupStore.Ending ending() {
            return DedupStore.Ending.commitIf(commit);
        }
    }
}
