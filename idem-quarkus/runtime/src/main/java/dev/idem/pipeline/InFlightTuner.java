package dev.idem.pipeline;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * How many group transactions each event loop keeps in flight, between 1 and a most: the count
 * under which deliveries settle fastest, found by trying. A second transaction in flight uses
 * cores that wait on a dear commit (a slow fsync, a synchronous standby); where commits are cheap
 * and the cores busy it only halves the groups and pays BEGIN, COMMIT and the flush twice as often.
 * Which of the two holds cannot be told from one transaction's duration (on two busy cores a cheap
 * commit's lasts as long as a dear one's), so the tuner measures the outcome instead: out of every
 * {@value #CYCLE} windows of {@code window} nanoseconds it runs the last {@value #PROBE} at one more
 * (or one less) and keeps that count when deliveries settled at least {@value #GAIN} times as fast
 * as in the windows just before. The window a count changes in is not compared: the transactions
 * begun under the other count still run then. A probe costs while it runs (at c = 128 two in flight
 * halve groups of 30), so each one lost in a row doubles the cycles until the next, up to
 * 2^{@value #MOST_LOST}: where the kept count stays right, a probe every 13 s.
 *
 * <p>Safe to call from every loop: settlements are counted with a {@link LongAdder}, and the
 * window's end is judged under the tuner's lock, ten times a second.
 */
final class InFlightTuner {

    static final int CYCLE = 16;
    static final int PROBE = 4;
    static final double GAIN = 1.05;
    static final int MOST_LOST = 3;

    private final int least;
    private final int most;
    private final long window;
    private final LongSupplier nanos;
    private final LongAdder settled = new LongAdder();
    private final double[] rates = new double[CYCLE];
    private volatile int limit;
    private volatile long windowEnds;
    private long windowStarted;
    private int position;
    private volatile int kept;
    private boolean up = true;
    /** Probes lost in a row, and the cycles left before the next: each lost one doubles the wait. */
    private int lost;
    private int quiet;

    /** Between {@code least} and {@code most} in flight (the same: that count, never tried otherwise). */
    InFlightTuner(int least, int most, long windowNanos, LongSupplier nanos) {
        this.least = Math.max(1, least);
        this.most = Math.max(this.least, most);
        this.limit = this.least;
        this.kept = this.least;
        this.window = windowNanos;
        this.nanos = nanos;
        this.windowStarted = nanos.getAsLong();
        this.windowEnds = windowStarted + windowNanos;
    }

    /** The transactions a loop may have in flight now. */
    int limit() {
        return limit;
    }

    /** The count kept between probes. */
    int kept() {
        return kept;
    }

    /** {@code deliveries} settled by a transaction that just ended. */
    void settled(int deliveries) {
        settled.add(deliveries);
        long now = nanos.getAsLong();
        if (most > least && now - windowEnds >= 0) {
            roll(now);
        }
    }

    private synchronized void roll(long now) {
        if (now - windowEnds < 0) {
            return; // another loop closed this window
        }
        rates[position] = settled.sumThenReset() / (double) Math.max(1, now - windowStarted);
        windowStarted = now;
        windowEnds = now + window;
        position = (position + 1) % CYCLE;
        int probeAt = CYCLE - PROBE;
        if (position == probeAt && quiet > 0) {
            quiet--;
        } else if (position == probeAt) {
            int probe = up ? kept + 1 : kept - 1;
            if (probe < least || probe > most) {
                up = !up;
                probe = up ? kept + 1 : kept - 1;
            }
            limit = probe;
        } else if (position == 0 && limit != kept) {
            // the probe's windows but its first, against as many of the kept count's just before it
            double probed = 0, before = 0;
            for (int i = 1; i < PROBE; i++) {
                probed += rates[probeAt + i];
                before += rates[probeAt - i];
            }
            if (probed >= before * GAIN) {
                kept = limit;
                lost = 0;
            } else {
                up = !up;
                lost = Math.min(lost + 1, MOST_LOST);
            }
            quiet = (1 << lost) - 1;
            limit = kept;
        }
    }
}
