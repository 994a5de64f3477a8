package dev.idem.ops;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

@ConfigMapping(prefix = "idem.archive")
public interface ArchiveConfig {
    /**
     * How often published outbox events, and (through {@code idem.pipeline.archive.interval}) dedup
     * records, are archived. Declared here so that the key maps however it is set.
     */
    @WithDefault("10m")
    Duration interval();

    /** Rows moved per statement: small enough that no lock is held for long. */
    @WithDefault("500")
    int batchSize();

    /** Batches per run at most, so one run stays bounded; the next run goes on. */
    @WithDefault("200")
    int maxBatches();

    /** How long published outbox events stay in the hot table. */
    @WithDefault("7d")
    Duration outboxRetention();
}
