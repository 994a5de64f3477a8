package dev.idem.pipeline;

import dev.idem.pipeline.DedupCache.PreCheck;
import dev.idem.pipeline.DeliveryTraces.DeliverySpan;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * The one-phase protocol, for a list of deliveries with distinct keys (a single delivery is a list
 * of one), in the order of docs/DESIGN.md:
 * <ol>
 *   <li>the Redis pre-check: one call claims every key and answers what was there; DONE answers;
 *   <li>Postgres, one transaction: the suspects' rows looked up (a key Redis did not claim for this
 *       delivery may have its record already), the works run on the transaction's connection in key
 *       order, and the records of what they answered written DONE as its last statement;
 *   <li>judgement: a key whose record met another transaction's row is judged by that row, and the
 *       transaction runs again without it; a work that refused after writing is rolled back and
 *       its refusal recorded without it; after an error each delivery runs alone, so a failure
 *       stays with the delivery it belongs to;
 *   <li>DONE to Redis for what committed, and the claims of deliveries that kept no record given back;
 *   <li>each outcome counted, and its span ended ({@link DeliveryTraces}).
 * </ol>
 * How deliveries are gathered into those transactions is a strategy beside this class: {@link Alone},
 * {@link GroupCommit} (concurrent requests share one), {@link PollRounds} (a Kafka poll). Failures of
 * Postgres are not outcomes: they fail the delivery's Uni, and the caller retries or answers 503.
 *
 * <p>A delivery whose statement the database refuses for its data, alone, is REJECTED as
 * {@code INVALID_DATA} (retrying cannot change it); one whose work breaks a unique constraint of the
 * work's own tables is judged by its key's record, or REJECTED as {@code UNIQUE_VIOLATION} when there
 * is none. Works run in key order and the records are written in key order, so two transactions that
 * share keys wait for each other instead of deadlocking.
 */
@ApplicationScoped
class OnePhase {

    /**
     * A delivery on its way to the database. {@code suspect}: Redis did not claim the key for it
     * (another delivery marked it, or Redis was skipped), so its record may exist already and is
     * looked up before any work runs. {@code span}: its trace, which its record keeps.
     */
    record Pending(IdemRequest request, Work work, boolean suspect, DeliverySpan span) {
        /** A delivery that is not traced. */
        Pending(IdemRequest request, Work work, boolean suspect) {
            this(request, work, suspect, DeliverySpan.NONE);
        }
    }

    /** What became of a delivery in the database. */
    sealed interface Settled {
        /** Its outcome, and the result Redis may now answer its duplicates with (encoded JSON; null: none). */
        record Decided(Outcome outcome, String doneInCache) implements Settled {}

        /** Its transaction failed: nothing of it took effect, the caller retries or answers 503. */
        record Failed(Throwable failure) implements Settled {}
    }

    /** How deliveries that reached the database are gathered into transactions: {@link #transact}, or a queue before it. */
    @FunctionalInterface
    interface Transactions {
        Uni<List<Settled>> settle(List<Pending> pending);
    }

    private final DedupCache cache;
    private final DedupStore store;
    private final PipelineConfig config;
    private final PipelineMetrics metrics;
    private final Clock clock;
    private final Mistakes mistakes;
    private final DeliveryTraces traces;

    OnePhase(DedupCache cache, DedupStore store, PipelineConfig config, PipelineMetrics metrics, Clock clock,
             DeliveryTraces traces) {
        this.traces = traces;
        this.cache = cache;
        this.store = store;
        this.config = config;
        this.metrics = metrics;
        this.clock = clock;
        this.mistakes = new Mistakes(clock, metrics);
    }

    /**
     * The protocol for {@code items} (distinct keys): the outcome of each, in their order. The
     * deliveries Redis cannot answer go to the database through {@code transactions}. No client
     * waits for a Kafka poll's answer, so a poll waits for Redis's DONE marks ({@code awaitCache}):
     * a slow Redis slows the consumer down instead of piling up writes; a request's answer does not
     * wait, and a duplicate meanwhile finds the row. If a delivery's transaction failed, the Uni
     * fails, once the others are settled and counted.
     */
    Uni<List<Outcome>> run(List<IdempotencyPipeline.Item> items, Transactions transactions, boolean awaitCache) {
        return cacheFirst(items.stream().map(IdempotencyPipeline.Item::request).toList(),
                unanswered -> transactions.settle(unanswered.stream()
                        .map(u -> new Pending(u.request(), items.get(u.index()).work(), u.suspect(), u.span()))
                        .toList()),
                awaitCache);
    }

    /** A delivery Redis could not answer: its place among the requests, whether it is a {@link Pending#suspect}, its span. */
    record Unanswered(int index, IdemRequest request, boolean suspect, DeliverySpan span) {}

    /**
     * Steps 1, 4 and 5, which the two-phase protocol shares: the pre-check, {@code database} for
     * the deliveries Redis could not answer (what became of each, in order), then the DONE marks
     * and the claims given back, and every outcome counted.
     */
    Uni<List<Outcome>> cacheFirst(List<IdemRequest> requests, Function<List<Unanswered>, Uni<List<Settled>>> database,
                                  boolean awaitCache) {
        Outcome[] outcomes = new Outcome[requests.size()];
        boolean[] byCache = new boolean[requests.size()];
        DeliverySpan[] spans = new DeliverySpan[requests.size()];
        for (int i = 0; i < requests.size(); i++) {
            spans[i] = traces.start(requests.get(i));
        }
        return cache.preCheckAll(requests).chain(checks -> {
            List<Unanswered> unanswered = new ArrayList<>();
            for (int i = 0; i < requests.size(); i++) {
                if (checks.get(i) instanceof PreCheck.Done done) {
                    outcomes[i] = Outcomes.ofCache(requests.get(i), done);
                    byCache[i] = true;
                } else {
                    unanswered.add(new Unanswered(i, requests.get(i), !(checks.get(i) instanceof PreCheck.Claimed), spans[i]));
                }
            }
            if (unanswered.isEmpty()) {
                return Uni.createFrom().<Throwable>nullItem();
            }
            return Uni.createFrom().deferred(() -> database.apply(unanswered))
                    .onFailure().recoverWithItem(failure -> Collections.<Settled>nCopies(unanswered.size(),
                            new Settled.Failed(failure)))
                    .chain(settled -> {
                        Throwable failure = null;
                        for (int j = 0; j < settled.size(); j++) {
                            if (settled.get(j) instanceof Settled.Decided decided) {
                                outcomes[unanswered.get(j).index()] = decided.outcome();
                            } else if (failure == null) {
                                failure = ((Settled.Failed) settled.get(j)).failure();
                            }
                        }
                        Uni<Void> cached = afterCommit(unanswered, settled);
                        if (!awaitCache) {
                            cached.subscribe().with(ignored -> {});
                            cached = Uni.createFrom().voidItem();
                        }
                        return cached.replaceWith(failure);
                    });
        }).chain(failure -> {
            for (int i = 0; i < outcomes.length; i++) {
                if (outcomes[i] != null) {
                    metrics.outcome(requests.get(i).scope(), outcomes[i]);
                    spans[i].end(outcomes[i], byCache[i]);
                } else {
                    spans[i].failed(failure);
                }
            }
            return failure == null
                    ? Uni.createFrom().item(Arrays.asList(outcomes))
                    : Uni.createFrom().failure(failure);
        });
    }

    /**
     * DONE in Redis for what committed or was found done, in one call; then the claims of the
     * deliveries that kept no record (refused, or their transaction failed) are given back, so that
     * their next delivery is claimed afresh rather than looked up.
     */
    Uni<Void> afterCommit(List<Unanswered> pending, List<? extends Settled> settled) {
        List<IdemRequest> done = new ArrayList<>();
        List<String> results = new ArrayList<>();
        List<IdemRequest> released = new ArrayList<>();
        for (int j = 0; j < settled.size(); j++) {
            IdemRequest request = pending.get(j).request();
            if (settled.get(j) instanceof Settled.Decided decided && decided.doneInCache() != null) {
                done.add(request);
                results.add(decided.doneInCache());
            } else if (!pending.get(j).suspect() && keptNoRecord(settled.get(j))) {
                released.add(request);
            }
        }
        return cache.markDoneAll(done, results).chain(() -> cache.release(released));
    }

    private static boolean keptNoRecord(Settled settled) {
        return settled instanceof Settled.Failed
                || settled instanceof Settled.Decided decided && decided.doneInCache() == null
                        && decided.outcome() instanceof Outcome.Rejected;
    }

    // --- steps 2 and 3: the transaction and its judgement ---------------------------------------

    /** Steps 2 and 3 for {@code pending} (distinct keys), in one transaction or more: what became of each, in its order. */
    Uni<List<Settled>> transact(List<Pending> pending) {
        Settled[] settled = new Settled[pending.size()];
        List<Integer> byKey = IntStream.range(0, pending.size()).boxed()
                .sorted(Comparator.comparing((Integer i) -> pending.get(i).request().key())
                        .thenComparing(i -> pending.get(i).request().scope()))
                .toList();
        return attempt(pending, byKey, settled, new HashSet<>()).map(ignored -> Arrays.asList(settled));
    }

    /**
     * One transaction over {@code open}; then again without what it settled, or each alone after an
     * error. {@code vanished}: deliveries whose conflicting row was gone when looked up (archived
     * meanwhile); each is tried once more, then answered IN_FLIGHT.
     */
    private Uni<Void> attempt(List<Pending> pending, List<Integer> open, Settled[] settled, Set<Integer> vanished) {
        if (open.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        open.forEach(i -> pending.get(i).span().grouped(open.size()));
        return store.transaction(lockBound(pending, open), tx -> decide(tx, pending, open, vanished), round -> round.commit)
                .onItemOrFailure().transformToUni((round, failure) -> {
                    if (failure == null) {
                        round.decided.forEach((i, s) -> settled[i] = s);
                        if (!round.again.isEmpty()) {
                            metrics.groupRetried(round.wroteThenRefused ? "refused" : "conflict");
                        }
                        return attempt(withRefusals(pending, round.refused), round.again, settled, vanished);
                    }
                    DedupStore.Failure kind = store.classify(failure);
                    if (open.size() > 1 && kind != DedupStore.Failure.UNAVAILABLE) {
                        // one delivery's statement or work failed and took the others' transaction with it
                        metrics.groupRetried("error");
                        return Multi.createFrom().iterable(open)
                                .onItem().transformToUniAndConcatenate(i -> attempt(pending, List.of(i), settled, vanished))
                                .collect().last().replaceWithVoid();
                    }
                    return failed(pending, open, settled, failure, kind);
                });
    }

    /**
     * The transaction of {@code open} failed, and retrying it as it is would fail the same way, or
     * the store itself failed. A work that broke a unique constraint of its own tables met a change
     * made before: by this key's first delivery when the key has a record (Redis had lost the key,
     * so the work ran before the record was looked up), and then the record answers.
     */
    private Uni<Void> failed(List<Pending> pending, List<Integer> open, Settled[] settled, Throwable failure,
                             DedupStore.Failure kind) {
        if (kind == DedupStore.Failure.UNIQUE_VIOLATION) {
            return store.transaction(Optional.empty(), tx -> store.findAll(tx, requests(pending, open)), read -> false)
                    .map(found -> {
                        for (int i : open) {
                            DedupRecord record = found.get(DedupStore.batchKey(pending.get(i).request()));
                            settled[i] = record != null ? judged(pending.get(i).request(), record, config)
                                    : new Settled.Decided(Outcomes.uniqueViolation(failure), null);
                        }
                        return (Void) null;
                    })
                    .onFailure().recoverWithItem(lookup -> {
                        open.forEach(i -> settled[i] = new Settled.Failed(lookup));
                        return null;
                    });
        }
        Settled alone = switch (kind) {
            case LOCK_NOT_AVAILABLE -> new Settled.Decided(Outcomes.inFlight(config), null);
            case INVALID_DATA -> new Settled.Decided(Outcomes.invalidData(failure), null);
            default -> new Settled.Failed(failure);
        };
        open.forEach(i -> settled[i] = alone);
        return Uni.createFrom().voidItem();
    }

    private Uni<Round> decide(SqlConnection tx, List<Pending> pending, List<Integer> open, Set<Integer> vanished) {
        Round round = new Round();
        List<Integer> suspects = open.stream().filter(i -> pending.get(i).suspect()).toList();
        Uni<Map<String, DedupRecord>> existing = suspects.isEmpty()
                ? Uni.createFrom().item(Map.of())
                : store.findAll(tx, requests(pending, suspects));
        Uni<Round> decided = existing.chain(records -> {
            List<Integer> working = new ArrayList<>();
            for (int i : open) {
                DedupRecord record = records.get(DedupStore.batchKey(pending.get(i).request()));
                if (record == null) {
                    working.add(i);
                } else {
                    round.decided.put(i, judged(pending.get(i).request(), record, config));
                }
            }
            List<Effect> known = knownEffects(pending, working);
            if (known != null) {
                // every effect is known already: the records go out right behind the works, pipelined
                return Uni.combine().all().unis(works(tx, pending, working),
                        record(tx, pending, working, known, round, vanished)).asTuple()
                        .map(both -> {
                            checked(pending, working, both.getItem1());
                            return both.getItem2();
                        });
            }
            return works(tx, pending, working).chain(ran -> {
                checked(pending, working, ran);
                for (int j = 0; j < ran.size(); j++) {
                    if (ran.get(j).effect() instanceof Effect.Rejected refused && ran.get(j).changes() > 0) {
                        round.wroteThenRefused = true;
                        int i = working.get(j);
                        if (Outcomes.kept(refused, config.storesRefusals(pending.get(i).request().scope()))) {
                            round.refused.put(i, refused);
                        } else {
                            round.decided.put(i, new Settled.Decided(Outcomes.ofEffect(refused), null));
                        }
                    }
                }
                if (round.wroteThenRefused) {
                    // what a refused work wrote must not commit: roll back; the others run again, and a
                    // refusal to be kept is recorded then, without running its work again
                    round.again = working.stream().filter(i -> !round.decided.containsKey(i)).toList();
                    return Uni.createFrom().item(round);
                }
                return record(tx, pending, working, ran.stream().map(Ran::effect).toList(), round, vanished);
            });
        });
        return decided;
    }

    /** The effects of {@code working} when every one of them is known before it runs, else null. */
    private static List<Effect> knownEffects(List<Pending> pending, List<Integer> working) {
        List<Effect> effects = new ArrayList<>(working.size());
        for (int i : working) {
            if (!(pending.get(i).work() instanceof Work.Known known)) {
                return null;
            }
            effects.add(known.effect());
        }
        return effects;
    }

    /**
     * What a work reported, how many statements it sent through the connection it was given, and
     * how many of them changed rows.
     */
    private record Ran(Effect effect, int statements, int changes, long nanos) {}

    /**
     * The works of {@code working}, in that order, pipelined on the transaction's connection; each
     * is given the connection {@link WatchedConnection watched}.
     */
    private static Uni<List<Ran>> works(SqlConnection tx, List<Pending> pending, List<Integer> working) {
        if (working.isEmpty()) {
            return Uni.createFrom().item(List.of());
        }
        List<Uni<Ran>> runs = new ArrayList<>(working.size());
        for (int i : working) {
            Pending delivery = pending.get(i);
            SqlConnection watched = WatchedConnection.watch(tx, delivery.request().scope(), delivery.span().traceparent());
            long started = System.nanoTime();
            Uni<Effect> effect;
            try {
                effect = Objects.requireNonNull(delivery.span().current(() -> delivery.work().run(watched)),
                        "the work answered null, not a Uni");
            } catch (RuntimeException thrown) {
                effect = Uni.createFrom().failure(thrown);
            }
            runs.add(effect.onItem().ifNull().failWith(() -> new NullPointerException("the work's Uni gave null, not an Effect"))
                    .map(e -> new Ran(e, WatchedConnection.statements(watched), WatchedConnection.changes(watched),
                            System.nanoTime() - started)));
        }
        return Uni.join().all(runs).andFailFast();
    }

    /**
     * {@code pending} with the works of {@code refused} replaced by their refusals: a work that
     * refused after writing is not run again (its decision stands), its refusal is recorded in a
     * transaction that holds none of its writes.
     */
    private static List<Pending> withRefusals(List<Pending> pending, Map<Integer, Effect.Rejected> refused) {
        if (refused.isEmpty()) {
            return pending;
        }
        List<Pending> next = new ArrayList<>(pending);
        refused.forEach((i, refusal) -> next.set(i, new Pending(pending.get(i).request(),
                new Work.Known(refusal, tx -> Uni.createFrom().voidItem()), pending.get(i).suspect(), pending.get(i).span())));
        return next;
    }

    /** The mistakes a work can make that no outcome shows: each is logged, once a minute per scope. */
    private void checked(List<Pending> pending, List<Integer> working, List<Ran> ran) {
        for (int j = 0; j < ran.size(); j++) {
            String scope = pending.get(working.get(j)).request().scope();
            Ran r = ran.get(j);
            if (r.effect() instanceof Effect.Processed && r.statements() == 0) {
                mistakes.warn(scope, "no-statement", "%s: a work reported Processed but sent no statement through the "
                        + "connection it was given, so what it changed is not in the pipeline's transaction: a crash "
                        + "before the commit leaves the change without its record, and a retry makes it twice. "
                        + "Send the work's statements through that connection.", scope);
            }
            if (r.nanos() > config.slowWork().toNanos()) {
                mistakes.warn(scope, "slow", "%s: a work took %d ms in the pipeline's transaction (idem.pipeline.slow-work "
                        + "is %s): the deliveries sharing the transaction waited as long, and its row locks were held. "
                        + "Keep calls to other services out of the work (two-phase mode is for them).",
                        scope, r.nanos() / 1_000_000, config.slowWork());
            }
        }
    }

    /**
     * The dedup records of the works, in one statement: what each answered, its refusal included
     * (unless its scope stores none; a refused work wrote nothing by now). Every record written:
     * commit. Some met another transaction's row: judge those by it (this transaction sees it now
     * that it committed), roll back, run the rest again.
     */
    private Uni<Round> record(SqlConnection tx, List<Pending> pending, List<Integer> working, List<Effect> effects,
                              Round round, Set<Integer> vanished) {
        List<Integer> kept = new ArrayList<>();
        List<String> results = new ArrayList<>();
        Map<Integer, Outcome> outcomes = new HashMap<>();
        for (int j = 0; j < working.size(); j++) {
            int i = working.get(j);
            Outcome outcome = Outcomes.ofEffect(effects.get(j));
            JsonObject stored = Outcomes.stored(effects.get(j), config.storesRefusals(pending.get(i).request().scope()),
                    pending.get(i).span().traceId());
            if (stored == null) {
                round.decided.put(i, new Settled.Decided(outcome, null));
            } else {
                kept.add(i);
                results.add(JsonText.encode(stored));
                outcomes.put(i, outcome);
            }
        }
        if (kept.isEmpty()) {
            return Uni.createFrom().item(round);
        }
        Instant now = clock.instant();
        List<IdemRequest> requests = requests(pending, kept);
        List<Instant> expiresAt = requests.stream().map(r -> now.plus(config.retention(r.scope()))).toList();
        return store.recordAll(tx, requests, results, now, expiresAt).chain(written -> {
            List<Integer> conflicts = new ArrayList<>();
            for (int k = 0; k < kept.size(); k++) {
                int i = kept.get(k);
                if (written.contains(DedupStore.batchKey(requests.get(k)))) {
                    round.decided.put(i, new Settled.Decided(outcomes.get(i), results.get(k)));
                } else {
                    conflicts.add(i);
                }
            }
            if (conflicts.isEmpty()) {
                round.commit = true;
                return Uni.createFrom().item(round);
            }
            kept.forEach(round.decided::remove);
            return store.findAll(tx, requests(pending, conflicts)).map(found -> {
                List<Integer> again = new ArrayList<>();
                for (int i : kept) {
                    DedupRecord record = conflicts.contains(i)
                            ? found.get(DedupStore.batchKey(pending.get(i).request()))
                            : null;
                    if (record != null) {
                        round.decided.put(i, judged(pending.get(i).request(), record, config));
                    } else if (!conflicts.contains(i) || vanished.add(i)) {
                        // not a conflict, or one whose row was archived before the lookup: its key is free again
                        again.add(i);
                    } else {
                        round.decided.put(i, new Settled.Decided(Outcomes.inFlight(config), null));
                    }
                }
                round.again = again;
                return round;
            });
        });
    }

    /** A row another delivery committed; a DONE one is the key's answer, and refreshes Redis. */
    static Settled.Decided judged(IdemRequest request, DedupRecord record, PipelineConfig config) {
        Outcome outcome = Outcomes.ofExisting(request, record, Outcomes.inFlight(config));
        boolean answer = outcome instanceof Outcome.Duplicate
                || outcome instanceof Outcome.Rejected rejected && rejected.replayed();
        return new Settled.Decided(outcome, answer ? JsonText.encode(record.result()) : null);
    }

    /** The shortest concurrent wait among the scopes of {@code open}, if any has one. */
    private Optional<Duration> lockBound(List<Pending> pending, List<Integer> open) {
        return open.stream()
                .map(i -> config.concurrentWait(pending.get(i).request().scope()))
                .flatMap(Optional::stream)
                .min(Comparator.naturalOrder());
    }

    private static List<IdemRequest> requests(List<Pending> pending, List<Integer> indices) {
        return indices.stream().map(i -> pending.get(i).request()).toList();
    }

    /**
     * How one transaction ended: what it settled, whether it commits, who runs again; whether a work
     * refused after writing, and those of such works whose refusals are kept (run again as them).
     */
    private static final class Round {
        final Map<Integer, Settled> decided = new HashMap<>();
        final Map<Integer, Effect.Rejected> refused = new HashMap<>();
        List<Integer> again = List.of();
        boolean commit;
        boolean wroteThenRefused;
    }
}
