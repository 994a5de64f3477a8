package dev.idem.orders;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** Orders, {@code idem.orders.*}. */
@ConfigMapping(prefix = "idem.orders")
public interface OrdersConfig {

    /**
     * How long an order waits for its payment: its gateways are not asked about it after that.
     * Nothing closes an expired order yet; a notification that comes later still pays it.
     */
    @WithDefault("2h")
    Duration expiry();
}
