package dev.idem.payments;

import static dev.idem.payments.IncidentStormTest.COPIES;
import static dev.idem.payments.IncidentStormTest.ORDERS;
import static dev.idem.payments.IncidentStormTest.with;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;

import dev.idem.testing.Db;
import dev.idem.testing.Metrics;
import dev.idem.testing.Storm;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Redis is a cache: with nothing listening where it should be, the storm still pays each order
 * once. Only one-time tokens need Redis, and they say so.
 */
@QuarkusTest
@TestProfile(RedisUnreachableStormTest.RedisOnClosedPort.class)
class RedisUnreachableStormTest {

    public static class RedisOnClosedPort implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // port 1 (tcpmux) is closed on loopback: every Redis call is refused
            return Map.of("quarkus.redis.hosts", "redis://127.0.0.1:1");
        }
    }

    @Inject
    Pool pool;

    @Test
    void stormWithoutRedisPaysOnceAndCountsTheDegradedMode() {
        Storm storm = new Storm(new Db(pool)).createOrders(ORDERS);
        Metrics before = Metrics.scrape();

        storm.deliver(COPIES, 64, null);
        Metrics after = Metrics.scrape();

        storm.assertPaidOnceWithOneCoupon();
        IncidentStormTest.assertOutcomesCounted(before, after);
        assertEquals(0, after.delta(before, "idem_pipeline_duplicates_total", with("layer", "redis")));
        long degraded = after.delta(before, "idem_redis_degraded_total", Map.of("scope", PaymentService.SCOPE));
        assertTrue(degraded >= (long) ORDERS * COPIES, "each pre-check skipped Redis and was counted: " + degraded);
    }

    @Test
    void tokensAnswerUnavailableWhileKeysKeepWorking() {
        String user = "no-redis-" + UUID.randomUUID();
        given().header("X-User-Id", user).post("/api/tokens").then()
                .statusCode(503).header("Retry-After", "1").body("code", equalTo("TOKEN_STORE_UNAVAILABLE"));
        given().header("X-User-Id", user).header("Idempotency-Token", "any")
                .contentType("application/json").body("{\"amountCents\":1999,\"currency\":\"CNY\"}")
                .post("/api/orders").then()
                .statusCode(503).body("code", equalTo("TOKEN_STORE_UNAVAILABLE"));
        given().header("X-User-Id", user).header("Idempotency-Key", "still-works")
                .contentType("application/json").body("{\"amountCents\":1999,\"currency\":\"CNY\"}")
                .post("/api/orders").then()
                .statusCode(201);
    }
}
