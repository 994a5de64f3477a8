package dev.idem.bench;

import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Two services measured side by side in one sitting ({@code compare}): never two load steps at
 * once, and each measured step of one side right beside the same step of the other, so that a
 * ratio compares two moments of the shared machine seconds apart, not minutes. The sides take the
 * first place in turn, round by round (the second step of a pair tended to be the faster), then
 * both go on to what comes next (new orders, say) until the next pair. A side
 * that stops early (a failure, a broken ramp) {@link #leave leaves}: the other then runs alone.
 */
final class Turns {

    /** One service alone: nothing to take turns with. */
    static final Turns SOLO = new Turns(false);

    private static final long MAX_WAIT_MINUTES = 30;

    private final ReentrantLock load = new ReentrantLock(true);
    private final CyclicBarrier meet = new CyclicBarrier(2);
    private final CyclicBarrier handOver = new CyclicBarrier(2);
    private final CyclicBarrier done = new CyclicBarrier(2);
    private volatile boolean paired;

    private Turns(boolean paired) {
        this.paired = paired;
    }

    static Turns pair() {
        return new Turns(true);
    }

    /** A load step of either side, never at the same time as another. */
    Load.Step alone(Supplier<Load.Step> step) {
        load.lock();
        try {
            return step.get();
        } finally {
            load.unlock();
        }
    }

    /**
     * A measured step of {@code side} (0 or 1) in its {@code round} (0, 1, …), beside the same step
     * of the other side while both take part: side 0 goes first in even rounds, side 1 in odd ones.
     */
    Load.Step beside(int side, int round, Supplier<Load.Step> step) {
        if (!paired || !await(meet)) {
            return alone(step);
        }
        boolean first = side == round % 2;
        if (!first && !await(handOver)) {
            return alone(step);
        }
        Load.Step measured;
        try {
            measured = alone(step);
        } catch (RuntimeException | Error e) {
            leave();
            throw e;
        }
        if (first) {
            await(handOver);
        }
        await(done);
        return measured;
    }

    /** This side takes no more turns: the other goes on alone, and is let go if it waits now. */
    void leave() {
        paired = false;
        meet.reset();
        handOver.reset();
        done.reset();
    }

    private boolean await(CyclicBarrier barrier) {
        try {
            barrier.await(MAX_WAIT_MINUTES, TimeUnit.MINUTES);
            return paired;
        } catch (BrokenBarrierException | TimeoutException e) {
            leave();
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            leave();
            return false;
        }
    }
}
