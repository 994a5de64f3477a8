package dev.idem.ops;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** The operator console's short history, kept in memory by each instance. */
@ConfigMapping(prefix = "idem.console")
public interface ConsoleConfig {
    /** How often the counters are sampled: one bar of the console's charts. */
    @WithDefault("10s")
    Duration sampleInterval();

    /** How far back the charts reach; older samples are dropped. */
    @WithDefault("1h")
    Duration history();
}
