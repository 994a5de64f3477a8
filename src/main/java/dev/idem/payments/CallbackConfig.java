package dev.idem.payments;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

@ConfigMapping(prefix = "idem.callback")
public interface CallbackConfig {
    /** The HMAC key shared with the gateway. No default outside the dev and test profiles. */
    String secret();

    /**
     * Secrets still accepted while the gateway moves to {@link #secret()}: deliveries signed with
     * one of them are counted apart, so an operator sees when they can be dropped.
     */
    Optional<List<String>> previousSecrets();

    /** How far a callback's timestamp may be from now, either way. */
    @WithDefault("300s")
    Duration tolerance();
}
