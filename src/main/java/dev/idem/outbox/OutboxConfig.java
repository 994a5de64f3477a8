package dev.idem.outbox;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** The outbox relay, {@code idem.outbox.*}. */
@ConfigMapping(prefix = "idem.outbox")
public interface OutboxConfig {
    /** How often the relay looks at the outbox besides being woken by new events: its safety net. */
    @WithDefault("2s")
    Duration pollInterval();

    /** Events published per transaction. */
    @WithDefault("200")
    int batchSize();

    /** Whether this instance relays at all (every instance may; SKIP LOCKED shares the work). */
    @WithDefault("true")
    boolean relayEnabled();
}
