package dev.idem.pipeline.kafka;

import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;

/**
 * Lets one consumer apply several polls at once, its partitions side by side. Reactive Messaging
 * hands a channel's messages to its method one after another; answered at once, the consumer polls
 * again while earlier records are still being applied. Order holds where it matters: a piece of
 * work waits only for the work submitted before it on the same lane (a partition). Each lane runs
 * on an event loop of its own where there are enough ({@code partition mod loops}): the pipeline
 * groups a loop's transactions, and one consumer's loop alone would queue every partition's
 * transactions behind one another. At most {@code limit} pieces are in flight: past that,
 * {@link #admission()} waits for one to end, and with it the consumer's next message.
 */
final class PartitionLanes {

    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final int limit;
    private final List<Executor> loops;
    // guarded by this
    private final Map<TopicPartition, CompletableFuture<Void>> tails = new HashMap<>();
    private final List<CompletableFuture<Void>> waiting = new ArrayList<>();
    private int inFlight;

    /** @param loops where lanes run, partition by partition, round the list */
    PartitionLanes(int limit, List<Executor> loops) {
        if (limit < 1 || loops.isEmpty()) {
            throw new IllegalArgumentException("a limit of at least 1 and a loop are needed: " + limit + ", " + loops);
        }
        this.limit = limit;
        this.loops = List.copyOf(loops);
    }

    /**
     * Runs {@code work} on the lane's loop once the lane's earlier work has ended, however that
     * ended. Work must not fail (the consumer retries a transient failure itself); if it does, the
     * lane goes on.
     */
    void submit(TopicPartition lane, Supplier<Uni<Void>> work) {
        CompletableFuture<Void> ended = new CompletableFuture<>();
        CompletableFuture<Void> before;
        synchronized (this) {
            inFlight++;
            before = tails.getOrDefault(lane, DONE);
            tails.put(lane, ended);
        }
        Executor loop = loops.get(Math.floorMod(lane.partition(), loops.size()));
        before.whenComplete((ignored, nothing) -> loop.execute(() -> Uni.createFrom().<Void>deferred(work::get)
                .onTermination().invoke(() -> end(lane, ended))
                .subscribe().with(done -> { }, failure -> { })));
    }

    /**
     * Completes once fewer than {@code limit} pieces are in flight. Several consumers may share the
     * lanes (a channel with {@code concurrency}): all that wait are let in when a piece ends, so the
     * limit may be passed by a few pieces.
     */
    Uni<Void> admission() {
        synchronized (this) {
            if (inFlight < limit) {
                return Uni.createFrom().voidItem();
            }
            CompletableFuture<Void> admitted = new CompletableFuture<>();
            waiting.add(admitted);
            return Uni.createFrom().completionStage(admitted);
        }
    }

    private void end(TopicPartition lane, CompletableFuture<Void> ended) {
        List<CompletableFuture<Void>> wake = List.of();
        synchronized (this) {
            inFlight--;
            // the lane's last piece: forget it, so that lanes of revoked partitions do not pile up
            tails.remove(lane, ended);
            if (!waiting.isEmpty() && inFlight < limit) {
                wake = List.copyOf(waiting);
                waiting.clear();
            }
        }
        ended.complete(null);
        wake.forEach(admitted -> admitted.complete(null));
    }
}
