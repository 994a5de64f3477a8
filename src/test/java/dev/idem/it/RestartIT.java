package dev.idem.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Topics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * An instance killed outright (SIGKILL: no graceful close, so the broker is never told it left)
 * and started again consumes its partitions within seconds of being up, not once the broker's
 * default 45 s session has run out: the extension gives its channels a 6 s session.
 */
class RestartIT {

    static final Duration READY = Duration.ofSeconds(90);
    /** What the contract promises: consuming again within 10 s of being up. */
    static final Duration PROMISED = Duration.ofSeconds(10);

    static final Jdbc db = new Jdbc("jdbc:" + ServiceProcess.DATABASE, "idem", "idem");

    @Test
    void anInstanceKilledAndStartedAgainConsumesEveryPartitionWithinTenSecondsOfBeingUp() {
        Logger.getLogger("org.apache.kafka").setLevel(Level.WARNING);
        ServiceProcess instance = ServiceProcess.start("restarted", TwoInstancesIT.ENV);
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            instance.awaitReady(READY);
            String run = "restart-" + UUID.randomUUID();
            awaitCoupons(grantOnEveryPartition(kafka, run + "-before"), Duration.ofSeconds(90));

            instance.kill();
            long killed = System.nanoTime();
            instance.restart().awaitReady(READY);
            long up = System.nanoTime();
            awaitCoupons(grantOnEveryPartition(kafka, run + "-after"), Duration.ofSeconds(90));
            long consumed = System.nanoTime();

            double fromUp = (consumed - up) / 1e9;
            System.out.printf("[RestartIT] %s killed (SIGKILL) and started again: ready %.1f s after the kill; a grant"
                            + " on each of the %d partitions of coupon-grants granted %.1f s after ready (%.1f s after"
                            + " the kill)%n", ServiceProcess.isNative() ? "native executable" : "jar",
                    (up - killed) / 1e9, Topics.PARTITIONS, fromUp, (consumed - killed) / 1e9);
            assertTrue(fromUp < PROMISED.toSeconds(), "consumed again " + fromUp + " s after being up, not within "
                    + PROMISED.toSeconds() + " s:\n" + instance.logTail());
        } finally {
            ServiceProcess.stopAll(instance);
        }
    }

    /** One grant on each partition of coupon-grants: their keys. */
    private static List<String> grantOnEveryPartition(KafkaTestClient kafka, String prefix) {
        List<String> keys = new ArrayList<>();
        for (int partition = 0; partition < Topics.PARTITIONS; partition++) {
            String bizKey = prefix + "-" + partition;
            kafka.send("coupon-grants", partition, bizKey, Topics.grant(bizKey, "restart-user"));
            keys.add(bizKey);
        }
        return keys;
    }

    private static void awaitCoupons(List<String> bizKeys, Duration atMost) {
        Awaitility.await().atMost(atMost).pollInterval(Duration.ofMillis(100)).until(() -> bizKeys.stream()
                .allMatch(key -> db.count("SELECT count(*) FROM coupons WHERE source_key = ?", key) == 1));
    }
}
