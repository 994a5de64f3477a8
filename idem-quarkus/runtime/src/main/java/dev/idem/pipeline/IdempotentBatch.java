package dev.idem.pipeline;

import dev.idem.pipeline.GroupTransaction.Pending;
import dev.idem.pipeline.GroupTransaction.Settled;
import dev.idem.pipeline.DedupCache.PreCheck;
import dev.idem.pipeline.IdempotencyPipeline.Item;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link IdempotencyPipeline#executeAll}: the same layers as a single delivery and, for each
 * delivery, the outcome it would have had alone. The round trips are per batch instead of per
 * delivery: one cache call of pre-checks; one {@link GroupTransaction} holding the works
 * (pipelined on its connection) and one statement writing every record; one cache call of DONE
 * marks after the commit.
 *
 * <p>One-phase work only. If the transaction fails, no delivery of the batch took effect (those
 * that were tried alone after an error and committed are duplicates when the batch comes again),
 * and the caller retries the batch.
 */
@ApplicationScoped
class IdempotentBatch {

    private final DedupCache cache;
    private final GroupTransaction transaction;
    private final PipelineMetrics metrics;

    IdempotentBatch(DedupCache cache, GroupTransaction transaction, PipelineMetrics metrics) {
        this.cache = cache;
        this.transaction = transaction;
        this.metrics = metrics;
    }

    /** The outcome of each item, in the items' order. */
    Uni<List<Outcome>> execute(List<Item> items) {
        Outcome[] outcomes = new Outcome[items.size()];
        Uni<Void> done = Uni.createFrom().voidItem();
        for (List<Integer> round : rounds(items)) {
            done = done.chain(() -> round(items, round, outcomes));
        }
        return done.map(ignored -> Arrays.asList(outcomes));
    }

    /**
     * A key that comes twice in one batch has its second copy in a second round, after the first
     * committed: it then meets the first as any duplicate does.
     */
    private static List<List<Integer>> rounds(List<Item> items) {
        List<List<Integer>> rounds = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < items.size(); i++) {
            int round = seen.merge(DedupStore.batchKey(items.get(i).request()), 1, Integer::sum) - 1;
            if (round == rounds.size()) {
                rounds.add(new ArrayList<>());
            }
            rounds.get(round).add(i);
        }
        return rounds;
    }

    private Uni<Void> round(List<Item> items, List<Integer> round, Outcome[] outcomes) {
        return cache.preCheckAll(round.stream().map(i -> items.get(i).request()).toList()).chain(checks -> {
            List<Integer> unanswered = new ArrayList<>();
            List<Pending> pending = new ArrayList<>();
            for (int j = 0; j < round.size(); j++) {
                int i = round.get(j);
                Item item = items.get(i);
                if (checks.get(j) instanceof PreCheck.Done done) {
                    outcomes[i] = Outcomes.ofCache(item.request(), done);
                } else {
                    unanswered.add(i);
                    pending.add(new Pending(item.request(), item.work(), !(checks.get(j) instanceof PreCheck.Claimed)));
                }
            }
            return pending.isEmpty() ? Uni.createFrom().voidItem() : transact(unanswered, pending, outcomes);
        }).invoke(() -> round.forEach(i -> metrics.outcome(items.get(i).request().scope(), outcomes[i])));
    }

    /**
     * The deliveries Redis could not answer, in one transaction; Redis hears DONE after the commit.
     * No client waits for a poll's answer, so the poll waits for Redis: a slow Redis slows the
     * consumer down instead of piling up writes.
     */
    private Uni<Void> transact(List<Integer> indices, List<Pending> pending, Outcome[] outcomes) {
        return transaction.run(pending).chain(settled -> {
            List<IdemRequest> done = new ArrayList<>();
            List<String> results = new ArrayList<>();
            List<IdemRequest> released = new ArrayList<>();
            Optional<Throwable> failure = Optional.empty();
            for (int j = 0; j < settled.size(); j++) {
                boolean claimed = !pending.get(j).suspect();
                if (settled.get(j) instanceof Settled.Decided decided) {
                    outcomes[indices.get(j)] = decided.outcome();
                    if (decided.cacheable() != null) {
                        done.add(pending.get(j).request());
                        results.add(decided.cacheable());
                    } else if (claimed && decided.outcome() instanceof Outcome.Rejected) {
                        released.add(pending.get(j).request());
                    }
                } else {
                    if (claimed) {
                        released.add(pending.get(j).request());
                    }
                    if (failure.isEmpty()) {
                        failure = Optional.of(((Settled.Failed) settled.get(j)).failure());
                    }
                }
            }
            // a claim whose delivery kept no record is given back
            Uni<Void> marked = cache.markDoneAll(done, results).chain(() -> cache.release(released));
            return failure.map(f -> marked.chain(() -> Uni.createFrom().<Void>failure(f))).orElse(marked);
        });
    }
}
