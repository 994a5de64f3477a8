package dev.idem.tokens;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

@ConfigMapping(prefix = "idem.token")
public interface TokenConfig {
    /** How long a submit token lives: longer than a front-end session keeps a form open. */
    @WithDefault("30m")
    Duration ttl();
}
