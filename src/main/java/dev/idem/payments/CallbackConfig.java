package dev.idem.payments;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

@ConfigMapping(prefix = "idem.callback")
public interface CallbackConfig {
    /** The HMAC key shared with the gateway. No default outside the dev and test profiles. */
    String secret();

    /** How far a callback's timestamp may be from now, either way. */
    @WithDefault("300s")
    Duration tolerance();
}
