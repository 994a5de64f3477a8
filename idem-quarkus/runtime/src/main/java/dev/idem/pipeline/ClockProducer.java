package dev.idem.pipeline;

import io.quarkus.arc.DefaultBean;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;

/**
 * The one source of time: leases, expiry and retention read it. A service (or its tests) that
 * declares a {@code Clock} bean of its own replaces this one.
 */
class ClockProducer {

    @Produces
    @Singleton
    @DefaultBean
    Clock clock() {
        return Clock.systemUTC();
    }
}
