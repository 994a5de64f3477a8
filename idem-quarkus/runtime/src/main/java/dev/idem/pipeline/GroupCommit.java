package dev.idem.pipeline;

import dev.idem.pipeline.GroupTransaction.Pending;
import dev.idem.pipeline.GroupTransaction.Settled;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.smallrye.common.vertx.VertxContext;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Group commit: one-phase deliveries that wait for the database at the same time share one
 * transaction, so BEGIN, COMMIT, the WAL flush and the round trips are paid per group, not per
 * delivery. Each event loop keeps its own queue, touched only by its thread: at most
 * {@code idem.pipeline.group-commit.in-flight} of its transactions run at once, and when one ends
 * the next takes whatever waits, up to {@code max-size}. An idle loop starts a delivery's
 * transaction at once, so nothing waits for company.
 *
 * <p>{@link GroupTransaction} gives each delivery the outcome it would have had alone; every
 * answer leaves only after its transaction committed. the cache hears DONE afterwards without holding
 * the answers back: a duplicate meanwhile finds the row in Postgres.
 */
@ApplicationScoped
class GroupCommit {

    private final GroupTransaction transaction;
    private final DedupCache cache;
    private final PipelineMetrics metrics;
    private final int maxSize;
    private final int inFlight;
    private final Map<Thread, Lane> lanes = new ConcurrentHashMap<>();

    GroupCommit(GroupTransaction transaction, DedupCache cache, PipelineMetrics metrics, PipelineConfig config) {
        this.transaction = transaction;
        this.cache = cache;
        this.metrics = metrics;
        this.maxSize = Math.max(1, config.groupCommit().maxSize());
        this.inFlight = Math.max(1, config.groupCommit().inFlight());
    }

    /** The outcome of {@code pending}, once the transaction it joined ended. */
    Uni<Outcome> submit(Pending pending) {
        return Uni.createFrom().emitter(emitter -> {
            Waiting waiting = new Waiting(pending, emitter);
            if (!Context.isOnEventLoopThread()) {
                // no loop to queue on (a worker thread): a transaction of its own
                run(List.of(waiting), null);
                return;
            }
            // the loop's root context: a lane outlives the request whose (duplicated) context made it
            lanes.computeIfAbsent(Thread.currentThread(),
                    loop -> new Lane(VertxContext.getRootContext(Vertx.currentContext()))).add(waiting);
        });
    }

    /** One transaction for {@code group}; then {@code lane} (null off a loop) starts its next. */
    private void run(List<Waiting> group, Lane lane) {
        metrics.groupSize(group.size());
        transaction.run(group.stream().map(Waiting::pending).toList()).subscribe().with(
                settled -> onLoop(lane, () -> {
                    if (lane != null) {
                        lane.ended();
                    }
                    cache(group, settled);
                    for (int i = 0; i < group.size(); i++) {
                        settle(group.get(i).emitter(), settled.get(i));
                    }
                }),
                failure -> onLoop(lane, () -> {
                    if (lane != null) {
                        lane.ended();
                    }
                    group.forEach(waiting -> waiting.emitter().fail(failure));
                }));
    }

    /** The Postgres client answers on the context that asked; should it not, the lane's thread takes over. */
    private static void onLoop(Lane lane, Runnable task) {
        if (lane == null || Thread.currentThread() == lane.thread) {
            task.run();
        } else {
            lane.loop.runOnContext(ignored -> task.run());
        }
    }

    /** DONE in the cache for what committed or was found done, in one call; the answers do not wait for it. */
    private void cache(List<Waiting> group, List<Settled> settled) {
        List<IdemRequest> requests = new ArrayList<>();
        List<String> results = new ArrayList<>();
        for (int i = 0; i < group.size(); i++) {
            if (settled.get(i) instanceof Settled.Decided decided && decided.cacheable() != null) {
                requests.add(group.get(i).pending().request());
                results.add(decided.cacheable());
            }
        }
        if (!requests.isEmpty()) {
            cache.markDoneAll(requests, results).subscribe().with(ignored -> {});
        }
    }

    private static void settle(UniEmitter<? super Outcome> emitter, Settled settled) {
        if (settled instanceof Settled.Decided decided) {
            emitter.complete(decided.outcome());
        } else {
            emitter.fail(((Settled.Failed) settled).failure());
        }
    }

    private record Waiting(Pending pending, UniEmitter<? super Outcome> emitter) {}

    /** The deliveries of one event loop; only that loop's thread touches it. */
    private final class Lane {
        private final Context loop;
        private final Thread thread = Thread.currentThread();
        private final ArrayDeque<Waiting> queue = new ArrayDeque<>();
        private int running;

        Lane(Context loop) {
            this.loop = loop;
        }

        void add(Waiting waiting) {
            queue.add(waiting);
            drain();
        }

        private void drain() {
            while (running < inFlight && !queue.isEmpty()) {
                running++;
                run(take(), this);
            }
        }

        /** A transaction ended: the next one takes whatever waits now. */
        void ended() {
            running--;
            drain();
        }

        /** Up to {@code maxSize} waiting deliveries, one per key: a key's next copy joins a later group. */
        private List<Waiting> take() {
            List<Waiting> group = new ArrayList<>();
            Set<String> keys = new HashSet<>();
            for (Iterator<Waiting> waiting = queue.iterator(); waiting.hasNext() && group.size() < maxSize; ) {
                Waiting next = waiting.next();
                if (keys.add(DedupStore.batchKey(next.pending().request()))) {
                    group.add(next);
                    waiting.remove();
                }
            }
            return group;
        }
    }
}
