package dev.idem.payments.query;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * When an order is asked again: the first delay doubled after each query, capped at the maximum
 * interval, up to a quarter shorter at random so that orders made together do not stay together;
 * never once the order expired. The last query is the last one due before the expiry.
 */
public final class QuerySchedule {

    /** The share of a wait that the jitter may take off. */
    static final double JITTER = 0.25;

    private QuerySchedule() {}

    /**
     * @param queries how many queries were made (at least 1)
     * @param random  uniform in [0, 1)
     */
    public static Optional<Instant> next(Instant createdAt, Instant now, int queries, Duration firstDelay,
                                         Duration maxInterval, Duration expiry, double random) {
        Duration backoff = firstDelay.multipliedBy(1L << Math.min(Math.max(queries - 1, 0), 30));
        if (backoff.compareTo(maxInterval) > 0) {
            backoff = maxInterval;
        }
        long wait = Math.max(1, (long) (backoff.toMillis() * (1 - JITTER * random)));
        Instant next = now.plusMillis(wait);
        return next.isBefore(createdAt.plus(expiry)) ? Optional.of(next) : Optional.empty();
    }
}
