package dev.idem.extension.it;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

/** The extension's counters, read from the application's MeterRegistry. */
@Singleton
final class Counters {

    private final MeterRegistry registry;

    @Inject
    Counters(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The sum of every counter {@code name} with all of {@code tags} (name, value, ...); 0 when none. */
    double count(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
    }

    /** Duplicates of {@code scope} that Postgres, not Redis, caught. */
    double duplicatesFromDb(String scope) {
        return count("idem.pipeline.duplicates", "scope", scope, "layer", "db");
    }

    /** Records of {@code channel} applied again after a failure. */
    double retries(String channel) {
        return count("idem.messaging.retries", "channel", channel);
    }
}
