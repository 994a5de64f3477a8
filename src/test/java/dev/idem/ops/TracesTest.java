package dev.idem.ops;

import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.payments.PaymentService;
import dev.idem.pipeline.PipelineConfig;
import dev.idem.testing.Gateway;
import dev.idem.testing.Zipkin;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * One payment's traces as an operator reads them in Zipkin (`./idem services tracing`, which
 * `./idem test` starts): the callback that did the work, its duplicates pointing at it, and the
 * coupon granted in the callback's own trace, through the outbox and Kafka. Nothing of the key or
 * the trade number leaves in a span.
 */
@QuarkusTest
@TestProfile(TracesTest.ToZipkin.class)
class TracesTest {

    public static class ToZipkin implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("idem.tracing.zipkin-endpoint", Zipkin.SPANS);
        }
    }

    @Inject
    RedisDataSource redis;

    @Inject
    PipelineConfig config;

    @Test
    void aDuplicateLeadsToTheDeliveryThatDidTheWorkAndTheCouponIsInItsTrace() throws Exception {
        String user = "traced-" + UUID.randomUUID();
        String order = newOrder(user, 1999);
        String tradeNo = "T-" + UUID.randomUUID();
        String body = callback(tradeNo, order, 1999, "SUCCESS");

        String first = Zipkin.newTraceId();
        deliver(body, first).then().statusCode(200).body("code", equalTo("SUCCESS"));
        String second = Zipkin.newTraceId();
        deliver(body, second).then().statusCode(200).body("duplicate", equalTo(true));

        JsonObject work = Zipkin.span(first, "idem payment-callback", 1);
        Map<String, Object> tags = work.getJsonObject("tags").getMap();
        assertEquals("payment-callback", tags.get("idem.scope"));
        assertEquals(sha256(tradeNo + ":SUCCESS").substring(0, 16), tags.get("idem.key.hash"));
        assertEquals("processed", tags.get("idem.outcome"));
        assertEquals("postgres", tags.get("idem.answered_by"));
        assertTrue(Integer.parseInt((String) tags.get("idem.group.size")) >= 1, tags.toString());
        assertFalse(tags.containsKey("idem.first.trace_id"), tags.toString());

        Map<String, Object> duplicate = Zipkin.span(second, "idem payment-callback", 1).getJsonObject("tags").getMap();
        assertEquals("duplicate", duplicate.get("idem.outcome"));
        assertEquals("redis", duplicate.get("idem.answered_by"));
        assertEquals(first, duplicate.get("idem.first.trace_id"));

        // the paid order's coupon: granted by the Kafka consumer, a child in the callback's trace
        JsonObject grant = Zipkin.span(first, "idem coupon-grant", 1);
        assertEquals("processed", grant.getJsonObject("tags").getString("idem.outcome"));
        assertTrue(Zipkin.descends(Zipkin.trace(first), grant, work), "the grant's span descends from the callback's");

        // the key's trail names the trace that applied it, and links to it in Zipkin
        String lookup = Zipkin.newTraceId();
        given().header("X-Admin-Token", "test-admin-token").header("traceparent", Zipkin.traceparent(lookup))
                .get("/admin/dedup/payment-callback/" + tradeNo + ":SUCCESS")
                .then().statusCode(200)
                .body("record.traceId", equalTo(first))
                .body("traceUrl", equalTo(Zipkin.BASE + "/zipkin/traces/" + first));

        Zipkin.span(lookup, "get /admin/dedup/{scope}/{key}", 1); // Zipkin writes names in lower case
        for (String trace : List.of(first, second, lookup)) {
            String exported = Zipkin.trace(trace).encode();
            assertFalse(exported.contains(tradeNo), "the trade number left in a span of " + trace);
            assertFalse(exported.contains(order), "the order id left in a span of " + trace);
        }
    }

    @Test
    void aDuplicateAnsweredByTheDatabaseNamesTheFirstTraceToo() throws Exception {
        String order = newOrder("traced-" + UUID.randomUUID(), 500);
        String body = callback("T-" + UUID.randomUUID(), order, 500, "SUCCESS");
        String first = Zipkin.newTraceId();
        deliver(body, first).then().statusCode(200);
        // a Redis that lost its mark: the record in Postgres answers, and keeps the first trace
        redis.key(String.class).del(config.redisPrefix() + ":" + PaymentService.SCOPE + ":"
                + new JsonObject(body).getString("tradeNo") + ":SUCCESS");
        String later = Zipkin.newTraceId();
        deliver(body, later).then().statusCode(200).body("duplicate", equalTo(true));

        Map<String, Object> tags = Zipkin.span(later, "idem payment-callback", 1).getJsonObject("tags").getMap();
        assertEquals("duplicate", tags.get("idem.outcome"));
        assertEquals(first, tags.get("idem.first.trace_id"));
    }

    private static Response deliver(String body, String traceId) {
        long ts = Gateway.now();
        return given().contentType("application/json")
                .header("X-Pay-Timestamp", Long.toString(ts))
                .header("X-Pay-Signature", Gateway.sign(ts, body))
                .header("traceparent", Zipkin.traceparent(traceId))
                .body(body)
                .post("/api/payments/callback");
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }
}
