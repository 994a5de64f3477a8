package dev.idem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.coupons.CouponService;
import dev.idem.payments.PaymentService;
import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Db;
import dev.idem.testing.Http;
import dev.idem.testing.Metrics;
import dev.idem.testing.RedisCluster;
import dev.idem.testing.Storm;
import dev.idem.testing.Tokens;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * idem against a Redis Cluster (three masters, a replica each): the pre-check, DONE, one-time
 * tokens and the batch forms of a Kafka poll, whose keys lie in many hash slots, and a master
 * killed in the middle of a storm.
 */
@QuarkusTest
@TestProfile(RedisClusterTest.Cluster.class)
class RedisClusterTest {

    public static class Cluster implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "quarkus.redis.client-type", "cluster",
                    "quarkus.redis.hosts", RedisCluster.hosts());
        }
    }

    static final int ORDERS = 150;
    static final int COPIES = 6;

    @Inject
    Pool pool;

    Db db;

    @BeforeEach
    void healthyCluster() {
        db = new Db(pool);
        RedisCluster.awaitHealthy(Duration.ofSeconds(30));
    }

    /** A test that killed a node leaves the cluster as it found it: every node up, three masters. */
    @AfterEach
    void everyNodeBack() {
        RedisCluster.startWhatIsDown();
        RedisCluster.awaitHealthy(Duration.ofSeconds(60));
    }

    @Test
    void paymentsTokensAndAKafkaPollsBatchesWorkAcrossHashSlots() {
        Storm storm = new Storm(db).createOrders(ORDERS);
        Metrics before = Metrics.scrape();

        storm.deliver(COPIES, 32, null);

        storm.assertPaidExactlyOnce();
        storm.assertOneCouponPerOrder();
        // DONE written for every callback key and, by the batch form, for every grant of the poll
        for (String order : storm.orderIds) {
            awaitDone("idem:" + PaymentService.SCOPE + ":" + Storm.tradeNo(order) + ":SUCCESS");
            awaitDone("idem:" + CouponService.SCOPE + ":paid:" + order);
        }
        Metrics after = Metrics.scrape();
        assertTrue(after.delta(before, "idem_pipeline_duplicates_total",
                Map.of("scope", PaymentService.SCOPE, "layer", "redis")) > 0, "duplicates stopped by the cluster");

        // the grants delivered again: the batch pre-check finds each DONE in its own slot
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            for (String order : storm.orderIds) {
                // as the outbox relay wrote it: the same content, so the same fingerprint
                kafka.send("coupon-grants", null, "paid:" + order, new JsonObject().put("bizKey", "paid:" + order)
                        .put("userId", storm.user).put("templateId", "PAY-5OFF").put("orderId", order).encode());
            }
            Topics.drainGrants(kafka, db, storm.user);
        }
        Metrics redelivered = Metrics.scrape();
        assertTrue(redelivered.delta(after, "idem_pipeline_duplicates_total",
                Map.of("scope", CouponService.SCOPE, "layer", "redis")) >= ORDERS / 2,
                "the redelivered poll's duplicates stopped at the cluster");
        storm.assertOneCouponPerOrder();

        // one-time tokens: a single-key script, consumed once by twenty concurrent clicks
        String user = "cluster-" + UUID.randomUUID();
        String token = Tokens.issue(user);
        List<Supplier<HttpRequest>> clicks = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            clicks.add(() -> Http.post("/api/orders", Tokens.ORDER)
                    .header("X-User-Id", user).header("Idempotency-Token", token).build());
        }
        List<Http.Answer> answers = new Http().all(clicks, 20, null);
        assertEquals(1, answers.stream().filter(a -> a.status() == 201).count());
        assertEquals(19, answers.stream().filter(a -> a.status() == 409 && a.body().contains("TOKEN_INVALID")).count());
        assertEquals(1, db.count("SELECT count(*) FROM orders WHERE user_id = $1", user));
    }

    @Test
    void aMasterKilledInTheMiddleOfAStormChangesNoAccount() {
        Storm storm = new Storm(db).createOrders(ORDERS);
        int victim = RedisCluster.masters().get(0);
        AtomicInteger killed = new AtomicInteger();

        try {
            storm.deliver(COPIES, 32, () -> {
                RedisCluster.kill(victim);
                killed.set(victim);
            });

            assertEquals(victim, killed.get());
            storm.assertPaidExactlyOnce();
            storm.assertOneCouponPerOrder();
            // its replica took over its slots
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250))
                    .until(() -> RedisCluster.serving() && !RedisCluster.masters().contains(victim));
        } finally {
            RedisCluster.start(victim);
        }
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(RedisCluster::healthy);
        // and a storm after it, against the promoted replica, is as exact
        Storm after = new Storm(db).createOrders(50);
        after.deliver(COPIES, 32, null);
        after.assertPaidExactlyOnce();
        after.assertOneCouponPerOrder();
    }

    private static void awaitDone(String key) {
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> RedisCluster.get(key).startsWith("DONE "));
    }
}
