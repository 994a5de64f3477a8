package dev.idem.testing;

import dev.idem.pipeline.KafkaTestClient;
import java.time.Duration;
import java.util.UUID;
import org.awaitility.Awaitility;

/**
 * The service's topics as its tests use them, with the kit's {@link KafkaTestClient} sending and
 * reading: how many partitions they have, a coupon grant's value, and waiting for grants.
 */
public final class Topics {

    /** coupon-grants, payment-callbacks and their -dlq: four partitions each (./idem services up). */
    public static final int PARTITIONS = 4;

    private Topics() {
    }

    /** A coupon grant's value on coupon-grants, as the outbox relay sends it. */
    public static String grant(String bizKey, String userId) {
        return "{\"bizKey\":\"" + bizKey + "\",\"userId\":\"" + userId + "\",\"templateId\":\"PAY-5OFF\"}";
    }

    /** Waits until the grant {@code bizKey} has its coupon. */
    public static void awaitCoupon(Db db, String bizKey) {
        Awaitility.await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200))
                .until(() -> db.count("SELECT count(*) FROM coupons WHERE source_key = $1", bizKey) == 1);
    }

    /**
     * A last grant on every partition of coupon-grants: once each has its coupon, everything
     * produced there before it has been consumed, since a partition is consumed in order.
     */
    public static void drainGrants(KafkaTestClient kafka, Db db, String userId) {
        for (int partition = 0; partition < PARTITIONS; partition++) {
            String bizKey = "sentinel-" + UUID.randomUUID();
            kafka.send("coupon-grants", partition, bizKey, grant(bizKey, userId + "-sentinel"));
            awaitCoupon(db, bizKey);
        }
    }
}
