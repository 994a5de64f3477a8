package dev.idem.pipeline;

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
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * The database step of one-phase deliveries with distinct keys, in one transaction: those of a
 * Kafka poll, or those that {@link GroupCommit} gathered. Each row is written once. Every
 * delivery's work runs first; then one statement writes the dedup record of every delivery that
 * took effect, already DONE with its result, as the transaction's last statement.
 *
 * <p>The unique key still arbitrates: a record that meets another transaction's row for its key
 * waits for that transaction and, once it committed, finds the row. Then this transaction rolls
 * back, the deliveries that met a row are judged by it, and the others run again without them. A
 * delivery whose statement fails takes the transaction with it, so after an error each delivery
 * is tried alone and the failure stays with the one it belongs to; a delivery whose data the
 * database refuses, alone, is REJECTED as {@code INVALID_DATA} (retrying cannot change it); one
 * whose work breaks a unique constraint of the work's own tables is judged by its key's record,
 * or REJECTED as {@code UNIQUE_VIOLATION} when there is none.
 *
 * <p>Works run in key order and the records are written in key order, so two transactions that
 * share keys wait for each other instead of deadlocking.
 */
@ApplicationScoped
class GroupTransaction {

    /**
     * A delivery on its way to the database. {@code suspect}: Redis did not claim the key for it
     * (another delivery marked it, or Redis was skipped), so its record may exist already and is
     * looked up before any work runs.
     */
    record Pending(IdemRequest request, Work work, boolean suspect) {}

    /** What became of a delivery. */
    sealed interface Settled {
        /** Its outcome, and the result Redis may now answer duplicates with (encoded; null: none). */
        record Decided(Outcome outcome, String cacheable) implements Settled {}

        /** Its transaction failed: nothing of it took effect, the caller retries or answers 503. */
        record Failed(Throwable failure) implements Settled {}
    }

    private final DedupStore store;
    private final PipelineConfig config;
    private final PipelineMetrics metrics;
    private final Clock clock;
    private final Mistakes mistakes;

    GroupTransaction(DedupStore store, PipelineConfig config, PipelineMetrics metrics, Clock clock) {
        this.store = store;
        this.config = config;
        this.metrics = metrics;
        this.clock = clock;
        this.mistakes = new Mistakes(clock, metrics);
    }

    /** What became of each of {@code pending} (distinct keys), in its order. */
    Uni<List<Settled>> run(List<Pending> pending) {
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
        return store.transaction(tx -> decide(tx, pending, open, vanished), round -> round.commit)
                .onItemOrFailure().transformToUni((round, failure) -> {
                    if (failure == null) {
                        round.decided.forEach((i, s) -> settled[i] = s);
                        if (!round.again.isEmpty()) {
                            metrics.groupRetried("conflict");
                        }
                        return attempt(pending, round.again, settled, vanished);
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
            return store.findAll(store.outside(), requests(pending, open))
                    .map(found -> {
                        for (int i : open) {
                            DedupRecord record = found.get(DedupStore.batchKey(pending.get(i).request()));
                            settled[i] = record != null ? judged(pending.get(i).request(), record)
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
            case LOCK_NOT_AVAILABLE -> new Settled.Decided(inFlight(), null);
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
                    round.decided.put(i, judged(pending.get(i).request(), record));
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
                if (working.size() > 1 && refusedAfterWriting(ran)) {
                    // its writes share the transaction with the others' work: roll back, each alone then
                    return Uni.createFrom().failure(new IllegalStateException("a refused work wrote in a shared transaction"));
                }
                return record(tx, pending, working, ran.stream().map(Ran::effect).toList(), round, vanished);
            });
        });
        // the bound goes out first, pipelined: if it failed, so does everything after it
        return lockBound(pending, open)
                .map(wait -> Uni.combine().all().unis(store.boundLockWaits(tx, wait), decided)
                        .asTuple().map(both -> both.getItem2()))
                .orElse(decided);
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
            SqlConnection watched = WatchedConnection.watch(tx, delivery.request().scope());
            long started = System.nanoTime();
            Uni<Effect> effect;
            try {
                effect = Objects.requireNonNull(delivery.work().run(watched), "the work answered null, not a Uni");
            } catch (RuntimeException thrown) {
                effect = Uni.createFrom().failure(thrown);
            }
            runs.add(effect.onItem().ifNull().failWith(() -> new NullPointerException("the work's Uni gave null, not an Effect"))
                    .map(e -> new Ran(e, WatchedConnection.statements(watched), WatchedConnection.changes(watched),
                            System.nanoTime() - started)));
        }
        return Uni.join().all(runs).andFailFast();
    }

    /** Whether a refused work changed rows: they must not commit with the others' work. */
    private static boolean refusedAfterWriting(List<Ran> ran) {
        return ran.stream().anyMatch(r -> r.effect() instanceof Effect.Refused && r.changes() > 0);
    }

    /** The mistakes a work can make that no outcome shows: each is logged, once a minute per scope. */
    private void checked(List<Pending> pending, List<Integer> working, List<Ran> ran) {
        for (int j = 0; j < ran.size(); j++) {
            String scope = pending.get(working.get(j)).request().scope();
            Ran r = ran.get(j);
            if (r.effect() instanceof Effect.Applied && r.statements() == 0) {
                mistakes.warn(scope, "no-statement", "%s: a work reported Applied but sent no statement through the "
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
     * The dedup records of the works that took effect, in one statement. A refused work wrote
     * nothing and keeps no record. Every record written: commit. Some met another transaction's
     * row: judge those by it (this transaction sees it now that it committed), roll back, run the
     * rest again.
     */
    private Uni<Round> record(SqlConnection tx, List<Pending> pending, List<Integer> working, List<Effect> effects,
                              Round round, Set<Integer> vanished) {
        List<Integer> kept = new ArrayList<>();
        List<String> results = new ArrayList<>();
        Map<Integer, Outcome> outcomes = new HashMap<>();
        for (int j = 0; j < working.size(); j++) {
            int i = working.get(j);
            Outcome outcome = Outcomes.ofEffect(effects.get(j));
            JsonObject stored = Outcomes.stored(effects.get(j));
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
                        round.decided.put(i, judged(pending.get(i).request(), record));
                    } else if (!conflicts.contains(i) || vanished.add(i)) {
                        // not a conflict, or one whose row was archived before the lookup: its key is free again
                        again.add(i);
                    } else {
                        round.decided.put(i, new Settled.Decided(inFlight(), null));
                    }
                }
                round.again = again;
                return round;
            });
        });
    }

    /** A row another delivery committed; a DONE one is the answer, and refreshes Redis. */
    private Settled judged(IdemRequest request, DedupRecord record) {
        Outcome outcome = Outcomes.ofExisting(request, record, inFlight());
        return new Settled.Decided(outcome, outcome instanceof Outcome.Duplicate duplicate
                ? JsonText.encode(duplicate.result())
                : null);
    }

    /** The shortest concurrent wait among the scopes of {@code open}, if any has one. */
    private Optional<Duration> lockBound(List<Pending> pending, List<Integer> open) {
        return open.stream()
                .map(i -> config.concurrentWait(pending.get(i).request().scope()))
                .flatMap(Optional::stream)
                .min(Comparator.naturalOrder());
    }

    private Outcome inFlight() {
        return Outcomes.inFlight(config);
    }

    private static List<IdemRequest> requests(List<Pending> pending, List<Integer> indices) {
        return indices.stream().map(i -> pending.get(i).request()).toList();
    }

    /** How one transaction ended: what it settled, whether it commits, who runs again. */
    private static final class Round {
        final Map<Integer, Settled> decided = new HashMap<>();
        List<Integer> again = List.of();
        boolean commit;
    }
}
