package dev.idem.coupons;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

@ConfigMapping(prefix = "idem.coupons")
public interface CouponsConfig {
    /**
     * Grants through the idempotency pipeline (the default). Off, a grant is a bare insert guarded
     * only by the unique source key: the baseline the benchmark measures the pipeline against.
     */
    @WithDefault("true")
    boolean pipeline();
}
