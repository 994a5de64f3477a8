package dev.idem.pipeline;

import dev.idem.pipeline.CacheFirst.Settled;
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
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
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
 * How deliveries are gathered into those transactions is a strategy beside this class: each alone,
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

    /** How deliveries that reached the database are gathered into transactions: {@link #transact}, or a queue before it. */
    @FunctionalInterface
    interface Transactions {
        Uni<List<Settled>> settle(List<Pending> pending);
    }

    private final CacheFirst cacheFirst;
    private final DedupStore store;
    private final PipelineConfig config;
    private final PipelineMetrics metrics;
    private final Clock clock;
    private final Mistakes mistakes;

    OnePhase(CacheFirst cacheFirst, DedupStore store, PipelineConfig config, PipelineMetrics metrics, Clock clock) {
        this.cacheFirst = cacheFirst;
        this.store = store;
        this.config = config;
        this.metrics = metrics;
        this.clock = clock;
        this.mistakes = new Mistakes(clock, metrics);
    }

    /**
     * The protocol for {@code items} (distinct keys): the outcome of each, in their order. The
     * deliveries Redis cannot answer go to the database through {@code transactions}; the rest is
     * {@link CacheFirst}'s, {@code awaitCache} included.
     */
    Uni<List<Outcome>> run(List<Item> items, Transactions transactions, boolean awaitCache) {
        return cacheFirst.run(items.stream().map(Item::request).toList(),
                unanswered -> transactions.settle(unanswered.stream()
                        .map(u -> new Pending(u.request(), items.get(u.index()).work(), u.suspect(), u.span()))
                        .toList()),
                awaitCache);
    }

    // --- steps 2 and 3: the transaction and its judgement ---------------------------------------

    /** A delivery in a round: its place among those given to {@link #transact}, and whether its row vanished once already. */
    record Open(int at, Pending pending, boolean vanishedBefore) {
        IdemRequest request() {
            return pending.request();
        }

        String batchKey() {
            return DedupStore.batchKey(pending.request());
        }

        /** Runs again as {@code refusal}: its decision stands, and is recorded without what its work wrote. */
        Open refusing(Effect.Rejected refusal) {
            Work recorded = new Work.Known(refusal, List.of());
            return new Open(at, new Pending(request(), recorded, pending.suspect(), pending.span()), vanishedBefore);
        }

        Open vanished() {
            return new Open(at, pending, true);
        }

        /** Runs again with its key's row looked up first: another transaction may have committed one. */
        Open suspected() {
            return new Open(at, new Pending(request(), pending.work(), true, pending.span()), vanishedBefore);
        }
    }

    /** What a work answered, how many statements it sent through its connection, how many of them changed rows. */
    record WorkRan(Effect effect, int statements, int changes, long nanos) {}

    /**
     * The results sent as records (encoded, by {@link Open#at}; a refusal not kept has none), the
     * keys written, the rows found in place of those not written, and whether the transaction
     * committed with them ({@link DedupStore#recordAllAndCommit}).
     */
    record Recorded(Map<Integer, String> results, Set<String> written, Map<String, DedupRecord> found, boolean committed) {
        static final Recorded NOTHING = new Recorded(Map.of(), Set.of(), Map.of());

        Recorded(Map<Integer, String> results, Set<String> written, Map<String, DedupRecord> found) {
            this(results, written, found, false);
        }
    }

    /** What a transaction saw, for {@link #judge}. */
    sealed interface Seen {
        /**
         * It ran: the suspects' rows found before any work, what each work answered (by
         * {@link Open#at}), and its records; none when a work refused after writing (the transaction
         * stopped there).
         */
        record Ran(Map<String, DedupRecord> before, Map<Integer, WorkRan> works, Optional<Recorded> recorded) implements Seen {}

        /**
         * It ran, and its records, sent with its COMMIT, met another transaction's committed row:
         * nothing committed. The suspects' rows found before any work stand.
         */
        record Met(Map<String, DedupRecord> before) implements Seen {}

        /** It failed, as {@code kind}; for a work alone that broke a unique constraint, its key's row if there is one. */
        record Failed(Throwable failure, DedupStore.Failure kind, Map<String, DedupRecord> found) implements Seen {}
    }

    /**
     * What one transaction came to: the deliveries it decided (by {@link Open#at}), those that run
     * again (together, or each alone when {@code split}; {@code careful}: with records written
     * before the commit is decided, as they may meet rows), how it ends, and why deliveries run
     * again (the metric's reason).
     */
    record Round(Map<Integer, Settled> decided, List<Open> again, boolean split, boolean careful,
                 DedupStore.Ending ending, Optional<String> retried) {}

    /** Steps 2 and 3 for {@code pending} (distinct keys), in one transaction or more: what became of each, in its order. */
    Uni<List<Settled>> transact(List<Pending> pending) {
        List<Open> open = IntStream.range(0, pending.size()).mapToObj(i -> new Open(i, pending.get(i), false))
                .sorted(Comparator.comparing((Open o) -> o.request().key()).thenComparing(o -> o.request().scope()))
                .toList();
        return rounds(open, false).map(decided -> IntStream.range(0, pending.size()).mapToObj(decided::get).toList());
    }

    /**
     * One transaction over {@code open}, judged; then the rounds of what it left. Unless
     * {@code careful}, the records go out with the COMMIT: a key Redis had claimed seldom meets a row.
     */
    private Uni<Map<Integer, Settled>> rounds(List<Open> open, boolean careful) {
        if (open.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        open.forEach(o -> o.pending().span().grouped(open.size()));
        return store.transaction(lockBound(open), tx -> observe(tx, open, careful).map(seen -> judge(open, seen, config)),
                        Round::ending)
                .onFailure().recoverWithUni(failure -> observeFailure(open, failure).map(seen -> judge(open, seen, config)))
                .chain(round -> {
                    round.retried().ifPresent(metrics::groupRetried);
                    Uni<Map<Integer, Settled>> later = round.split()
                            ? Multi.createFrom().iterable(round.again())
                                    .onItem().transformToUniAndConcatenate(alone -> rounds(List.of(alone), false))
                                    .collect().in(HashMap::new, Map::putAll)
                            : rounds(round.again(), round.careful());
                    return later.map(settled -> {
                        Map<Integer, Settled> all = new HashMap<>(round.decided());
                        all.putAll(settled);
                        return all;
                    });
                });
    }

    /**
     * Step 2: the suspects' rows looked up, the works run on the transaction's connection, and the
     * records of what they answered written as its last statement, unless a work refused after
     * writing: with its COMMIT unless {@code careful}, else judged first (the rows in the way of
     * records not written looked up).
     */
    private Uni<Seen> observe(SqlConnection tx, List<Open> open, boolean careful) {
        List<Open> suspects = open.stream().filter(o -> o.pending().suspect()).toList();
        Uni<Map<String, DedupRecord>> before = suspects.isEmpty()
                ? Uni.createFrom().item(Map.of())
                : store.findAll(tx, requests(suspects));
        return before.chain(found -> {
            List<Open> working = open.stream().filter(o -> !found.containsKey(o.batchKey())).toList();
            List<Begun> begun = begin(tx, working);
            List<Effect> known = knownEffects(begun);
            if (known != null) {
                // every effect is known already: the records go out right behind the works, pipelined
                return Uni.combine().all().unis(works(working, begun), record(tx, working, known, careful)).asTuple()
                        .map(both -> seen(found, both.getItem1(), both.getItem2()));
            }
            return works(working, begun).chain(ran -> {
                boolean wroteThenRefused = ran.values().stream()
                        .anyMatch(work -> work.effect() instanceof Effect.Rejected && work.changes() > 0);
                if (wroteThenRefused) {
                    return Uni.createFrom().item(new Seen.Ran(found, ran, Optional.empty()));
                }
                List<Effect> effects = working.stream().map(o -> ran.get(o.at()).effect()).toList();
                return record(tx, working, effects, careful).map(recorded -> seen(found, ran, recorded));
            });
        });
    }

    /** What the transaction saw once its records were sent; none: they met a committed row, nothing committed. */
    private static Seen seen(Map<String, DedupRecord> before, Map<Integer, WorkRan> works, Optional<Recorded> recorded) {
        return recorded.<Seen>map(r -> new Seen.Ran(before, works, Optional.of(r))).orElseGet(() -> new Seen.Met(before));
    }

    /**
     * The transaction failed. A work alone that broke a unique constraint of its own tables met a
     * change made before: by this key's first delivery when the key has a record (Redis had lost
     * the key, so the work ran before the record was looked up), which is looked up for judgement.
     */
    private Uni<Seen> observeFailure(List<Open> open, Throwable failure) {
        DedupStore.Failure kind = store.classify(failure);
        if (kind != DedupStore.Failure.UNIQUE_VIOLATION || open.size() > 1) {
            return Uni.createFrom().item(new Seen.Failed(failure, kind, Map.of()));
        }
        return store.transaction(Optional.empty(), tx -> store.findAll(tx, requests(open)), read -> DedupStore.Ending.ROLLBACK)
                .<Seen>map(found -> new Seen.Failed(failure, kind, found))
                // a lookup that fails leaves the delivery failed, as the store's own failure would
                .onFailure().recoverWithItem(lookup -> new Seen.Failed(lookup, DedupStore.Failure.UNAVAILABLE, Map.of()));
    }

    /**
     * Step 3, what the database saw become outcomes:
     * <ul>
     *   <li>a row found before any work ran, or in the way of a record, is the key's answer
     *       ({@link Settled.Decided#found});
     *   <li>a work that refused after writing: nothing commits, its refusal is recorded in the next
     *       round if kept (without running it again), the others run again;
     *   <li>every record written: commit (or committed, the records sent with the COMMIT). Some met
     *       another transaction's row: nothing commits, those are judged by the row, the rest run
     *       again; a row gone by the lookup (archived meanwhile) leaves its key free, tried once more
     *       and then IN_FLIGHT. Records sent with the COMMIT that met a row: nothing committed, all
     *       run again with their rows looked up first, their records judged before the commit;
     *   <li>the transaction failed: a group runs again each alone, so a failure stays with the
     *       delivery it belongs to; alone, a lock wait is IN_FLIGHT, data the database refused is
     *       REJECTED as INVALID_DATA, a unique violation is judged by the key's row or REJECTED as
     *       UNIQUE_VIOLATION, and anything else fails the delivery.
     * </ul>
     */
    static Round judge(List<Open> open, Seen seen, PipelineConfig config) {
        Map<Integer, Settled> decided = new LinkedHashMap<>();
        List<Open> again = new ArrayList<>();
        if (seen instanceof Seen.Failed failed) {
            if (open.size() > 1 && failed.kind() != DedupStore.Failure.UNAVAILABLE) {
                return new Round(Map.of(), open, true, false, DedupStore.Ending.ROLLBACK, Optional.of("error"));
            }
            for (Open o : open) {
                DedupRecord row = failed.found().get(o.batchKey());
                decided.put(o.at(), switch (failed.kind()) {
                    case UNIQUE_VIOLATION -> row != null ? Settled.Decided.found(o.request(), row, config)
                            : new Settled.Decided(Outcomes.uniqueViolation(failed.failure()));
                    case LOCK_NOT_AVAILABLE -> new Settled.Decided(Outcomes.inFlight(config));
                    case INVALID_DATA -> new Settled.Decided(Outcomes.invalidData(failed.failure()));
                    default -> new Settled.Failed(failed.failure());
                });
            }
            return new Round(decided, List.of(), false, false, DedupStore.Ending.ROLLBACK, Optional.empty());
        }
        if (seen instanceof Seen.Met met) {
            for (Open o : open) {
                DedupRecord before = met.before().get(o.batchKey());
                if (before != null) {
                    decided.put(o.at(), Settled.Decided.found(o.request(), before, config));
                } else {
                    again.add(o.suspected());
                }
            }
            return new Round(decided, again, false, true, DedupStore.Ending.ENDED, Optional.of("conflict"));
        }
        Seen.Ran ran = (Seen.Ran) seen;
        Recorded recorded = ran.recorded().orElse(Recorded.NOTHING);
        boolean conflicted = open.stream()
                .anyMatch(o -> recorded.results().containsKey(o.at()) && !recorded.written().contains(o.batchKey()));
        for (Open o : open) {
            DedupRecord before = ran.before().get(o.batchKey());
            WorkRan work = ran.works().get(o.at());
            String result = recorded.results().get(o.at());
            if (before != null) {
                decided.put(o.at(), Settled.Decided.found(o.request(), before, config));
            } else if (ran.recorded().isEmpty()) {
                if (!(work.effect() instanceof Effect.Rejected refused && work.changes() > 0)) {
                    again.add(o);
                } else if (Outcomes.kept(refused, config.storesRefusals(o.request().scope()))) {
                    again.add(o.refusing(refused));
                } else {
                    decided.put(o.at(), new Settled.Decided(Outcomes.ofEffect(refused)));
                }
            } else if (result == null) {
                decided.put(o.at(), new Settled.Decided(Outcomes.ofEffect(work.effect())));
            } else if (!conflicted) {
                decided.put(o.at(), new Settled.Decided(Outcomes.ofEffect(work.effect()), result));
            } else if (recorded.written().contains(o.batchKey())) {
                again.add(o);
            } else if (recorded.found().containsKey(o.batchKey())) {
                decided.put(o.at(), Settled.Decided.found(o.request(), recorded.found().get(o.batchKey()), config));
            } else if (!o.vanishedBefore()) {
                again.add(o.vanished());
            } else {
                decided.put(o.at(), new Settled.Decided(Outcomes.inFlight(config)));
            }
        }
        boolean commit = ran.recorded().isPresent() && !conflicted && !recorded.results().isEmpty();
        Optional<String> retried = again.isEmpty() ? Optional.empty()
                : Optional.of(ran.recorded().isEmpty() ? "refused" : "conflict");
        return new Round(decided, again, false, conflicted,
                recorded.committed() ? DedupStore.Ending.ENDED : DedupStore.Ending.commitIf(commit), retried);
    }

    /** A work begun on its watched connection, and when. */
    private record Begun(Work.Begun work, SqlConnection watched, long started) {}

    /** The effects of the works begun when every one of them is known before its statements answer, else null. */
    private static List<Effect> knownEffects(List<Begun> begun) {
        List<Effect> effects = new ArrayList<>(begun.size());
        for (Begun b : begun) {
            if (!(b.work() instanceof Work.Begun.Answered answered)) {
                return null;
            }
            effects.add(answered.effect());
        }
        return effects;
    }

    /** The works of {@code working} begun, in that order, each on the connection {@link WatchedConnection watched}. */
    private static List<Begun> begin(SqlConnection tx, List<Open> working) {
        List<Begun> begun = new ArrayList<>(working.size());
        for (Open o : working) {
            Pending delivery = o.pending();
            SqlConnection watched = WatchedConnection.watch(tx, delivery.request().scope(), delivery.span().traceparent());
            long started = System.nanoTime();
            Work.Begun work;
            try {
                work = delivery.span().current(() -> delivery.work().begin(watched));
            } catch (RuntimeException thrown) {
                work = new Work.Begun.Running(Uni.createFrom().failure(thrown));
            }
            begun.add(new Begun(work, watched, started));
        }
        return begun;
    }

    /** What each of the works begun answered, their statements pipelined on the transaction's connection, by {@link Open#at}. */
    private Uni<Map<Integer, WorkRan>> works(List<Open> working, List<Begun> begun) {
        if (working.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        List<Uni<WorkRan>> runs = new ArrayList<>(working.size());
        for (Begun b : begun) {
            Uni<Effect> effect = b.work() instanceof Work.Begun.Answered answered
                    ? Statement.allOn(b.watched(), answered.statements()).replaceWith(answered.effect())
                    : b.work() instanceof Work.Begun.Running running && running.effect() != null ? running.effect()
                    : Uni.createFrom().failure(new NullPointerException("the work answered null, not a Uni"));
            runs.add(effect.onItem().ifNull().failWith(() -> new NullPointerException("the work's Uni gave null, not an Effect"))
                    .map(e -> new WorkRan(e, WatchedConnection.statements(b.watched()), WatchedConnection.changes(b.watched()),
                            System.nanoTime() - b.started())));
        }
        return Uni.join().all(runs).andFailFast().map(ran -> {
            Map<Integer, WorkRan> byDelivery = new HashMap<>();
            for (int j = 0; j < ran.size(); j++) {
                checked(working.get(j).request().scope(), ran.get(j));
                byDelivery.put(working.get(j).at(), ran.get(j));
            }
            return byDelivery;
        });
    }

    /** The mistakes a work can make that no outcome shows: each is logged, once a minute per scope. */
    private void checked(String scope, WorkRan work) {
        if (work.effect() instanceof Effect.Processed && work.statements() == 0) {
            mistakes.warn(scope, "no-statement", "%s: a work reported Processed but sent no statement through the "
                    + "connection it was given, so what it changed is not in the pipeline's transaction: a crash "
                    + "before the commit leaves the change without its record, and a retry makes it twice. "
                    + "Send the work's statements through that connection.", scope);
        }
        if (work.nanos() > config.slowWork().toNanos()) {
            mistakes.warn(scope, "slow", "%s: a work took %d ms in the pipeline's transaction (idem.pipeline.slow-work "
                    + "is %s): the deliveries sharing the transaction waited as long, and its row locks were held. "
                    + "Keep calls to other services out of the work (two-phase mode is for them).",
                    scope, work.nanos() / 1_000_000, config.slowWork());
        }
    }

    /**
     * The dedup records of {@code working}, in one statement: what each answered, its refusal
     * included (unless its scope stores none). Unless {@code careful}, the COMMIT goes with them
     * (none: a record met a committed row, nothing committed); else the rows in the way of those
     * not written are looked up.
     */
    private Uni<Optional<Recorded>> record(SqlConnection tx, List<Open> working, List<Effect> effects, boolean careful) {
        List<Open> kept = new ArrayList<>();
        Map<Integer, String> results = new LinkedHashMap<>();
        for (int j = 0; j < working.size(); j++) {
            Open o = working.get(j);
            JsonObject stored = Outcomes.stored(effects.get(j), config.storesRefusals(o.request().scope()),
                    o.pending().span().traceId());
            if (stored != null) {
                kept.add(o);
                results.put(o.at(), JsonText.encode(stored));
            }
        }
        if (kept.isEmpty()) {
            return Uni.createFrom().item(Optional.of(Recorded.NOTHING));
        }
        Instant now = clock.instant();
        List<IdemRequest> requests = requests(kept);
        List<Instant> expiresAt = requests.stream().map(r -> now.plus(config.retention(r.scope()))).toList();
        List<String> encoded = List.copyOf(results.values());
        if (!careful) {
            Set<String> all = kept.stream().map(Open::batchKey).collect(Collectors.toSet());
            return store.recordAllAndCommit(tx, requests, encoded, now, expiresAt).map(committed -> committed
                    ? Optional.of(new Recorded(results, all, Map.of(), true)) : Optional.empty());
        }
        return store.recordAll(tx, requests, encoded, now, expiresAt).chain(written -> {
            List<Open> conflicts = kept.stream().filter(o -> !written.contains(o.batchKey())).toList();
            return conflicts.isEmpty()
                    ? Uni.createFrom().item(Optional.of(new Recorded(results, written, Map.of())))
                    : store.findAll(tx, requests(conflicts)).map(found -> Optional.of(new Recorded(results, written, found)));
        });
    }

    /** The shortest concurrent wait among the scopes of {@code open}, if any has one. */
    private Optional<Duration> lockBound(List<Open> open) {
        return open.stream()
                .map(o -> config.concurrentWait(o.request().scope()))
                .flatMap(Optional::stream)
                .min(Comparator.naturalOrder());
    }

    private static List<IdemRequest> requests(List<Open> open) {
        return open.stream().map(Open::request).toList();
    }
}
