package dev.idem.testing;

import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Real time plus an offset that a test moves forward, so that leases and expiry are tested by
 * moving time rather than by waiting for it. An alternative to the service's clock, selected only
 * by the test profiles that list it in {@code getEnabledAlternatives()}.
 */
@Alternative
@Singleton
public class MovableClock extends Clock {

    private final AtomicReference<Duration> offset = new AtomicReference<>(Duration.ZERO);

    /** Moves every reader of the clock {@code by} into the future, at once. */
    public void advance(Duration by) {
        offset.accumulateAndGet(by, Duration::plus);
    }

    @Override
    public Instant instant() {
        return Instant.now().plus(offset.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return Clock.offset(Clock.system(zone), offset.get());
    }
}
