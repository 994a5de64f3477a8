package dev.idem.ops;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Map;

@ConfigMapping(prefix = "idem.dead-letters")
public interface DeadLetterConfig {

    /** The channels whose dead letters the admin endpoints list and re-drive, by channel name. */
    Map<String, Channel> channels();

    /** Dead letters listed when the request names no limit. */
    @WithDefault("100")
    int defaultLimit();

    /** The most dead letters one listing holds, whatever the request asks. */
    @WithDefault("1000")
    int maxLimit();

    /** How long a read of a dead-letter topic may wait for Kafka without getting a batch further (then 503). */
    @WithDefault("30s")
    Duration readTimeout();

    /** Dead letters read per poll and re-driven per transaction. */
    @WithDefault("500")
    int batchSize();

    interface Channel {
        /** Where the channel's consumer reads, and where its dead letters are re-driven to. */
        String topic();

        /** Where the channel's consumer sends poison. */
        String deadLetterTopic();
    }
}
