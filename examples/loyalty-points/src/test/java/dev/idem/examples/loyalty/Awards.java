package dev.idem.examples.loyalty;

import dev.idem.pipeline.KafkaTestClient;
import java.time.Duration;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.ConfigProvider;

/** The points-awards channel's topic as the test profile has it; records go there through the kit's {@link KafkaTestClient}. */
final class Awards {

    static final String TOPIC = ConfigProvider.getConfig().getValue("mp.messaging.incoming.points-awards.topic", String.class);
    static final String DLQ = TOPIC + "-dlq";
    static final int PARTITIONS = 4;
    static final Duration PATIENCE = Duration.ofSeconds(120);

    private Awards() {
    }

    /** An award's value, as the service that grants points would send it. */
    static String award(String awardKey, String userId, int points) {
        return "{\"awardKey\":\"" + awardKey + "\",\"userId\":\"" + userId + "\",\"points\":" + points + "}";
    }

    /**
     * A last award on every partition: once each is applied, everything produced there before it
     * has been consumed, since a partition is consumed in order.
     */
    static void drain(KafkaTestClient kafka, Db db) {
        for (int partition = 0; partition < PARTITIONS; partition++) {
            String awardKey = "sentinel-" + UUID.randomUUID();
            kafka.send(TOPIC, partition, awardKey, award(awardKey, "sentinels", 1));
            Awaitility.await().atMost(PATIENCE).until(() -> db.awards(awardKey) == 1);
        }
    }
}
