package dev.idem.payments.query;

/**
 * One gateway's requests on this instance, at most {@code rate} a second: each takes the next free
 * slot, 1/rate after the one before, and waits until it comes. Real time, not the service's clock.
 */
final class QueryPace {

    private final long spacingNanos;
    private boolean started;
    private long next;

    QueryPace(int rate) {
        this.spacingNanos = 1_000_000_000L / rate;
    }

    /** How long a request made at {@code now} (System.nanoTime) waits for its slot. */
    synchronized long waitNanos(long now) {
        long slot = !started || now - next > 0 ? now : next;
        started = true;
        next = slot + spacingNanos;
        return slot - now;
    }
}
