package dev.idem.pipeline;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * The two-phase part of {@code idem.pipeline.*}: how long a claimer holds a record whose effect
 * lies outside the database, how often that effect is tried, and how often hanging records are
 * looked for. Times are read from the injected {@code Clock}, except the bound on one effect.
 */
@ConfigMapping(prefix = "idem.pipeline")
public interface TwoPhaseConfig {

    /**
     * How long a claim or a takeover holds a record before others may take it over. It must
     * outlast the effect (an external call and its timeout) and the confirmation.
     */
    @WithDefault("30s")
    Duration lease();

    /** Effect runs per record (the claim's and every takeover's); past them the record is FAILED. */
    @WithDefault("5")
    int maxAttempts();

    /** After an attempt failed for sure (an error, not a crash), when the record may be tried again. */
    @WithDefault("5s")
    Duration retryDelay();

    /** How often the recovery job looks for hanging records; {@code off} disables the job. */
    @WithDefault("10s")
    String recoveryInterval();

    /** Hanging records handled per recovery run (and per re-drive). */
    @WithDefault("100")
    int recoveryBatchSize();

    /** Hanging records re-driven at the same time within one run. */
    @WithDefault("4")
    int recoveryConcurrency();
}
