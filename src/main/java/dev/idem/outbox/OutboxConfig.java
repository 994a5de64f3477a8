package dev.idem.outbox;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

@ConfigMapping(prefix = "idem.outbox")
public interface OutboxConfig {
    /** Events published per transaction. */
    @WithDefault("200")
    int batchSize();

    /** Whether this instance relays at all (every instance may; SKIP LOCKED shares the work). */
    @WithDefault("true")
    boolean relayEnabled();
}
