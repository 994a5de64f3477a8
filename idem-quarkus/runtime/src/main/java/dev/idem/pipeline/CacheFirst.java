package dev.idem.pipeline;

import dev.idem.pipeline.DedupCache.PreCheck;
import dev.idem.pipeline.DeliveryTraces.DeliverySpan;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * The steps both protocols take around the database ({@link OnePhase}, {@link TwoPhase}): the
 * Redis pre-check of every key in one call; the database for the deliveries Redis could not answer;
 * then DONE in Redis for what committed and the claims of deliveries that kept no record given back;
 * each outcome counted and its span ended.
 */
@ApplicationScoped
class CacheFirst {

    /** A delivery Redis could not answer: its place among the requests, whether its key may have a record already, its span. */
    record Unanswered(int index, IdemRequest request, boolean suspect, DeliverySpan span) {
        /** A delivery of no request's, such as recovery's takeover: Redis hears DONE, no claim is given back. */
        static Unanswered recovered(IdemRequest request) {
            return new Unanswered(0, request, true, DeliverySpan.NONE);
        }
    }

    /** What became of a delivery in the database. */
    sealed interface Settled {
        /** Its outcome, and the result Redis may now answer its duplicates with (encoded JSON; null: none). */
        record Decided(Outcome outcome, String doneInCache) implements Settled {
            /** An outcome that leaves Redis as it is. */
            Decided(Outcome outcome) {
                this(outcome, null);
            }

            /** A row another delivery committed; a DONE one is the key's answer, and refreshes Redis. */
            static Decided found(IdemRequest request, DedupRecord row, PipelineConfig config) {
                Outcome outcome = Outcomes.ofExisting(request, row, Outcomes.inFlight(config));
                boolean answer = outcome instanceof Outcome.Duplicate
                        || outcome instanceof Outcome.Rejected rejected && rejected.replayed();
                return new Decided(outcome, answer ? JsonText.encode(row.result()) : null);
            }
        }

        /** Its transaction failed: nothing of it took effect, the caller retries or answers 503. */
        record Failed(Throwable failure) implements Settled {}
    }

    private final DedupCache cache;
    private final PipelineMetrics metrics;
    private final DeliveryTraces traces;

    CacheFirst(DedupCache cache, PipelineMetrics metrics, DeliveryTraces traces) {
        this.cache = cache;
        this.metrics = metrics;
        this.traces = traces;
    }

    /**
     * The outcome of each of {@code requests}, in their order; {@code database} settles those Redis
     * could not answer, in theirs. {@code awaitCache}: whether the answer waits for Redis's DONE
     * marks (a Kafka poll does, so that a slow Redis slows the consumer instead of piling up writes;
     * a request does not, and a duplicate meanwhile finds the row). If a delivery's transaction
     * failed, the Uni fails with its failure, once every delivery is settled and counted.
     */
    Uni<List<Outcome>> run(List<IdemRequest> requests, Function<List<Unanswered>, Uni<List<Settled>>> database,
                           boolean awaitCache) {
        List<DeliverySpan> spans = requests.stream().map(traces::start).toList();
        return cache.preCheckAll(requests).chain(checks -> {
            List<Unanswered> unanswered = new ArrayList<>();
            for (int i = 0; i < requests.size(); i++) {
                if (!(checks.get(i) instanceof PreCheck.Done)) {
                    unanswered.add(new Unanswered(i, requests.get(i), !(checks.get(i) instanceof PreCheck.Claimed), spans.get(i)));
                }
            }
            if (unanswered.isEmpty()) {
                // Redis answered every one: nothing for the database, nothing to mark
                return ended(requests, spans, checks, List.of(), List.of());
            }
            Uni<List<Settled>> settled = Uni.createFrom().deferred(() -> database.apply(unanswered))
                    .onFailure().recoverWithItem(failure -> Collections.nCopies(unanswered.size(), new Settled.Failed(failure)));
            return settled.call(all -> awaitCache ? afterCommit(unanswered, all) : detached(afterCommit(unanswered, all)))
                    .chain(all -> ended(requests, spans, checks, unanswered, all));
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

    private static Uni<Void> detached(Uni<Void> marks) {
        marks.subscribe().with(ignored -> {});
        return Uni.createFrom().voidItem();
    }

    /**
     * Every outcome counted and every span ended, the cache's answers and the database's in the
     * requests' order; then the outcomes, or the first failure.
     */
    private Uni<List<Outcome>> ended(List<IdemRequest> requests, List<DeliverySpan> spans, List<PreCheck> checks,
                                     List<Unanswered> unanswered, List<Settled> settled) {
        List<Outcome> outcomes = new ArrayList<>(Collections.nCopies(requests.size(), null));
        Optional<Throwable> failure = Optional.empty();
        for (int i = 0; i < requests.size(); i++) {
            if (checks.get(i) instanceof PreCheck.Done done) {
                outcomes.set(i, Outcomes.ofCache(requests.get(i), done));
                metrics.outcome(requests.get(i).scope(), outcomes.get(i));
                spans.get(i).end(outcomes.get(i), true);
            }
        }
        for (int j = 0; j < unanswered.size(); j++) {
            int i = unanswered.get(j).index();
            if (settled.get(j) instanceof Settled.Decided decided) {
                outcomes.set(i, decided.outcome());
                metrics.outcome(requests.get(i).scope(), decided.outcome());
                spans.get(i).end(decided.outcome(), false);
            } else {
                Throwable failed = ((Settled.Failed) settled.get(j)).failure();
                spans.get(i).failed(failed);
                failure = failure.or(() -> Optional.of(failed));
            }
        }
        return failure.map(Uni.createFrom()::<List<Outcome>>failure).orElseGet(() -> Uni.createFrom().item(outcomes));
    }
}
