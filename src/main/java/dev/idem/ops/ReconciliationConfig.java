package dev.idem.ops;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

@ConfigMapping(prefix = "idem.reconciliation")
public interface ReconciliationConfig {
    /** How long a grant may take from PAID to coupon, or an event to leave the outbox, before it is a finding. */
    @WithDefault("60s")
    Duration grace();

    /** Samples listed per check. */
    @WithDefault("10")
    int samples();

    /** How often the findings are recomputed for the gauges. */
    @WithDefault("60s")
    Duration interval();
}
