package dev.idem.pipeline;

import dev.idem.pipeline.OnePhase.Pending;
import dev.idem.pipeline.CacheFirst.Settled;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Group commit: one-phase deliveries that reach the database at the same time share one
 * transaction of the {@link OnePhase} protocol, so BEGIN, COMMIT, the WAL flush and the round trips
 * are paid per group, not per delivery. Each event loop keeps its own queue, touched only by its
 * thread: as many of its transactions run at once as {@link InFlightTuner} allows (up to
 * {@code idem.pipeline.group-commit.in-flight}), and when one ends the next takes whatever waits, up
 * to {@code max-size}. An idle loop starts a
 * delivery's transaction at once, so nothing waits for company. Each delivery gets the outcome it
 * would have had alone, once its transaction ended.
 */
@ApplicationScoped
class GroupCommit implements OnePhase.Transactions {

    private static final Duration TUNING_WINDOW = Duration.ofMillis(100);

    private final OnePhase protocol;
    private final PipelineMetrics metrics;
    private final int maxSize;
    private final InFlightTuner tuner;
    private final Map<Thread, Lane> lanes = new ConcurrentHashMap<>();

    GroupCommit(OnePhase protocol, PipelineMetrics metrics, PipelineConfig config) {
        this.protocol = protocol;
        this.metrics = metrics;
        this.maxSize = Math.max(1, config.groupCommit().maxSize());
        int inFlight = config.groupCommit().inFlight();
        this.tuner = new InFlightTuner(config.groupCommit().tuneInFlight() ? 1 : inFlight, inFlight,
                TUNING_WINDOW.toNanos(), System::nanoTime);
        metrics.inFlight(tuner::kept);
    }

    /** What became of each of {@code pending}, once the transactions they joined ended. */
    @Override
    public Uni<List<Settled>> settle(List<Pending> pending) {
        if (pending.size() == 1) {
            return queued(pending.get(0)).map(List::of);
        }
        return Uni.join().all(pending.stream().map(this::queued).toList()).andFailFast();
    }

    private Uni<Settled> queued(Pending pending) {
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
        protocol.transact(group.stream().map(Waiting::pending).toList()).subscribe().with(
                settled -> onLoop(lane, () -> {
                    tuner.settled(group.size());
                    ended(lane);
                    for (int i = 0; i < group.size(); i++) {
                        group.get(i).emitter().complete(settled.get(i));
                    }
                }),
                failure -> onLoop(lane, () -> {
                    ended(lane);
                    group.forEach(waiting -> waiting.emitter().complete(new Settled.Failed(failure)));
                }));
    }

    private static void ended(Lane lane) {
        if (lane != null) {
            lane.ended();
        }
    }

    /** The Postgres client answers on the context that asked; should it not, the lane's thread takes over. */
    private static void onLoop(Lane lane, Runnable task) {
        if (lane == null || Thread.currentThread() == lane.thread) {
            task.run();
        } else {
            lane.loop.runOnContext(ignored -> task.run());
        }
    }

    private record Waiting(Pending pending, UniEmitter<? super Settled> emitter) {}

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
            while (running < tuner.limit() && !queue.isEmpty()) {
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
