package dev.idem.pipeline;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

@ConfigMapping(prefix = "idem.dedup")
public interface DedupConfig {
    /** How long dedup records stay in the hot table; must exceed every retry window and Redis TTL. */
    @WithDefault("7d")
    Duration retention();
}
