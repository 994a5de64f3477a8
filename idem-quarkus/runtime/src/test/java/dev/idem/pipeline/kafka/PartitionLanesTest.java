package dev.idem.pipeline.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class PartitionLanesTest {

    private static final TopicPartition P0 = new TopicPartition("coupon-grants", 0);
    private static final TopicPartition P1 = new TopicPartition("coupon-grants", 1);

    /** A piece of work that starts when its lane lets it and ends when the test says so. */
    private static final class Piece {
        final CompletableFuture<Void> started = new CompletableFuture<>();
        final CompletableFuture<Void> end = new CompletableFuture<>();

        Uni<Void> run() {
            started.complete(null);
            return Uni.createFrom().completionStage(end);
        }
    }

    @Test
    void aLaneRunsItsWorkInTheOrderSubmittedWhileOtherLanesRunBeside() {
        PartitionLanes lanes = new PartitionLanes(2, List.of(Runnable::run));
        Piece first = new Piece();
        Piece second = new Piece();
        Piece other = new Piece();
        lanes.submit(P0, first::run);
        lanes.submit(P0, second::run);
        lanes.submit(P1, other::run);

        assertTrue(first.started.isDone());
        assertFalse(second.started.isDone(), "the second piece of p0 waits for the first");
        assertTrue(other.started.isDone(), "p1 does not wait for p0");

        first.end.complete(null);
        assertTrue(second.started.isDone());
        assertFalse(lanes.admission().subscribeAsCompletionStage().isDone(), "two pieces in flight, the limit");
    }

    @Test
    void eachPartitionRunsOnItsOwnLoopRoundTheList() {
        List<String> ran = new ArrayList<>();
        PartitionLanes lanes = new PartitionLanes(10, List.of(
                task -> { ran.add("loop 0"); task.run(); },
                task -> { ran.add("loop 1"); task.run(); }));
        for (int partition = 0; partition < 4; partition++) {
            lanes.submit(new TopicPartition("coupon-grants", partition), () -> Uni.createFrom().voidItem());
        }
        assertEquals(List.of("loop 0", "loop 1", "loop 0", "loop 1"), ran);
    }

    @Test
    void aFailedPieceDoesNotStopItsLane() {
        PartitionLanes lanes = new PartitionLanes(1, List.of(Runnable::run));
        Piece after = new Piece();
        lanes.submit(P0, () -> Uni.createFrom().failure(new IllegalStateException("refused")));
        lanes.submit(P0, after::run);

        assertTrue(after.started.isDone());
        after.end.complete(null);
        assertTrue(lanes.admission().subscribeAsCompletionStage().isDone(), "nothing in flight");
    }

    @Test
    void admissionWaitsWhileTheLimitIsInFlight() {
        PartitionLanes lanes = new PartitionLanes(2, List.of(Runnable::run));
        Piece a = new Piece();
        Piece b = new Piece();
        lanes.submit(P0, a::run);
        assertTrue(lanes.admission().subscribeAsCompletionStage().isDone());
        lanes.submit(P1, b::run);

        CompletableFuture<Void> admitted = lanes.admission().subscribeAsCompletionStage();
        assertFalse(admitted.isDone(), "two pieces in flight: the next waits");
        b.end.complete(null);
        assertTrue(admitted.isDone());
    }

    @Test
    void everyConsumerThatWaitsIsLetInWhenAPieceEnds() {
        PartitionLanes lanes = new PartitionLanes(1, List.of(Runnable::run));
        Piece a = new Piece();
        lanes.submit(P0, a::run);

        CompletableFuture<Void> first = lanes.admission().subscribeAsCompletionStage();
        CompletableFuture<Void> second = lanes.admission().subscribeAsCompletionStage();
        assertFalse(first.isDone() || second.isDone());
        a.end.complete(null);
        assertTrue(first.isDone(), "the first consumer waiting is let in");
        assertTrue(second.isDone(), "so is the second: none waits forever");
    }

    @Test
    void manySubmittersOnManyThreadsKeepEachLaneInOrder() throws Exception {
        PartitionLanes lanes = new PartitionLanes(1_000_000, List.of(Runnable::run));
        int laneCount = 4;
        int perLane = 2_000;
        List<ConcurrentLinkedQueue<Integer>> seen = new ArrayList<>();
        for (int l = 0; l < laneCount; l++) {
            seen.add(new ConcurrentLinkedQueue<>());
        }
        ExecutorService ends = Executors.newFixedThreadPool(4);
        CountDownLatch done = new CountDownLatch(laneCount * perLane);
        ExecutorService submitters = Executors.newFixedThreadPool(laneCount);
        try {
            for (int l = 0; l < laneCount; l++) {
                int lane = l;
                // each lane's pieces are submitted in order from one thread, as a consumer's polls are
                submitters.execute(() -> {
                    for (int i = 0; i < perLane; i++) {
                        int n = i;
                        lanes.submit(new TopicPartition("t", lane), () -> Uni.createFrom().voidItem()
                                .emitOn(ends)
                                .invoke(() -> {
                                    seen.get(lane).add(n);
                                    done.countDown();
                                }));
                    }
                });
            }
            assertTrue(done.await(30, TimeUnit.SECONDS));
        } finally {
            submitters.shutdownNow();
            ends.shutdownNow();
        }
        for (ConcurrentLinkedQueue<Integer> lane : seen) {
            List<Integer> order = new ArrayList<>(lane);
            assertEquals(perLane, order.size());
            for (int i = 0; i < perLane; i++) {
                assertEquals(i, order.get(i), "a lane's pieces ran out of order");
            }
        }
    }
}
