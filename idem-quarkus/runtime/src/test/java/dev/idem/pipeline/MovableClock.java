package dev.idem.pipeline;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;

/**
 * A clock that stands still until the test moves it. In production the pipeline reads the
 * service's {@link Clock} bean (the system clock, unless the service declares its own): leases,
 * Redis expiry, retention and recovery all read it. Moving this one is how a test lets a Redis
 * TTL or a lease pass without waiting.
 */
public final class MovableClock extends Clock {

    private volatile Instant now;

    /** A clock standing at {@code start}, in UTC. */
    public MovableClock(Instant start) {
        this.now = Objects.requireNonNull(start, "start");
    }

    /** Moves the clock forward by {@code by}, as if that much time had passed. */
    public void advance(Duration by) {
        if (by.isNegative()) {
            throw new IllegalArgumentException("time does not run backwards: " + by + "; set(Instant) moves the "
                    + "clock to any instant");
        }
        now = now.plus(by);
    }

    /** Puts the clock at {@code instant}, forward or back. */
    public void set(Instant instant) {
        now = Objects.requireNonNull(instant, "instant");
    }

    /** The instant the clock stands at. */
    @Override
    public Instant instant() {
        return now;
    }

    /** UTC. */
    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    /**
     * This clock in {@code zone}: the same instant, moved with this one (a clock made here stands
     * still on its own; move the original).
     */
    @Override
    public Clock withZone(ZoneId zone) {
        MovableClock original = this;
        return new Clock() {
            @Override
            public Instant instant() {
                return original.instant();
            }

            @Override
            public ZoneId getZone() {
                return zone;
            }

            @Override
            public Clock withZone(ZoneId other) {
                return original.withZone(other);
            }
        };
    }
}
