package dev.idem.ops;

import static dev.idem.testing.DeadLetterAdmin.TOKEN;
import static dev.idem.testing.Problems.problem;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.DeadLetterAdmin;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** What an operator reads of the dead-letter topics, and what the endpoints refuse. */
@QuarkusTest
class DeadLetterListTest {

    static final String CALLBACKS = "payment-callbacks";

    @Test
    void deadLettersAreListedNewestFirstWithTheirReasonsAndWhereTheyCameFrom() {
        String marker = UUID.randomUUID().toString();
        List<String> keys = List.of("first-" + marker, "second-" + marker, "third-" + marker);
        List<String> values = List.of(
                "not json " + marker,
                "{\"tradeNo\":\"" + marker + "\"}",
                "{\"tradeNo\":\"T\",\"orderId\":\"O\",\"amountCents\":1,\"status\":\"SUCCESS\",\"extra\":\"" + marker + "\"}");
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            // one after the other, each to another partition: their order is the order they were dead-lettered in
            for (int i = 0; i < keys.size(); i++) {
                kafka.send(CALLBACKS, i % Topics.PARTITIONS, keys.get(i), values.get(i));
                DeadLetterAdmin.await(CALLBACKS, keys.get(i), 1);
            }
        }

        List<Map<String, Object>> all = DeadLetterAdmin.list(CALLBACKS, 1000);
        List<Map<String, Object>> ours = all.stream().filter(record -> keys.contains((String) record.get("key"))).toList();
        assertEquals(List.of(keys.get(2), keys.get(1), keys.get(0)), ours.stream().map(r -> r.get("key")).toList());
        for (Map<String, Object> record : ours) {
            int i = keys.indexOf((String) record.get("key"));
            assertEquals(values.get(i), record.get("value"));
            assertEquals("utf-8", record.get("valueEncoding"));
            assertTrue(((String) record.get("reason")).startsWith("POISON: "), (String) record.get("reason"));
            Map<?, ?> source = (Map<?, ?>) record.get("source");
            assertEquals(CALLBACKS, source.get("topic"));
            assertEquals(i % Topics.PARTITIONS, source.get("partition"));
            assertTrue(((Number) source.get("offset")).longValue() >= 0);
        }
        for (int i = 1; i < all.size(); i++) {
            Instant newer = Instant.parse((String) all.get(i - 1).get("timestamp"));
            Instant older = Instant.parse((String) all.get(i).get("timestamp"));
            assertTrue(!newer.isBefore(older), "newest first: " + all.get(i - 1) + " before " + all.get(i));
        }

        List<Map<String, Object>> newest = DeadLetterAdmin.list(CALLBACKS, 1);
        assertEquals(1, newest.size());
        assertTrue(!Instant.parse((String) newest.get(0).get("timestamp"))
                .isBefore(Instant.parse((String) ours.get(0).get("timestamp"))));
        given().header("X-Admin-Token", TOKEN).get("/admin/dead-letters/" + CALLBACKS).then()
                .statusCode(200)
                .body("channel", equalTo(CALLBACKS))
                .body("topic", equalTo(CALLBACKS + "-dlq"))
                .body("limit", equalTo(100));
    }

    @Test
    void anUnknownChannelIsNotFound() {
        for (String channel : new String[] {"orders", "payment-callbacks-dlq"}) {
            problem(given().header("X-Admin-Token", TOKEN).get("/admin/dead-letters/" + channel), 404, "CHANNEL_NOT_FOUND");
            problem(given().header("X-Admin-Token", TOKEN).post("/admin/dead-letters/" + channel + "/redrive"),
                    404, "CHANNEL_NOT_FOUND");
        }
    }

    @Test
    void withoutTheAdminTokenNothingIsShownNorSent() {
        problem(given().get("/admin/dead-letters/" + CALLBACKS), 401, "ADMIN_UNAUTHORIZED");
        problem(given().header("X-Admin-Token", "guess").get("/admin/dead-letters/" + CALLBACKS), 401, "ADMIN_UNAUTHORIZED");
        problem(given().post("/admin/dead-letters/" + CALLBACKS + "/redrive"), 401, "ADMIN_UNAUTHORIZED");
        problem(given().post("/admin/dead-letters/" + CALLBACKS + "/redrive?offset=0:0"), 401, "ADMIN_UNAUTHORIZED");
    }

    @Test
    void aLimitOutOfRangeOrAnAmbiguousRecordIsRefused() {
        for (String limit : new String[] {"0", "1001", "-1", "ten", "1e3"}) {
            problem(given().header("X-Admin-Token", TOKEN).get("/admin/dead-letters/" + CALLBACKS + "?limit=" + limit),
                    400, "BAD_REQUEST");
        }
        for (String query : new String[] {"?offset=5", "?partition=1", "?offset=a:b", "?offset=1:2:3",
                "?partition=1&offset=0:2", "?offset=-1:2"}) {
            problem(given().header("X-Admin-Token", TOKEN).post("/admin/dead-letters/" + CALLBACKS + "/redrive" + query),
                    400, "BAD_REQUEST");
        }
        for (String query : new String[] {"?offset=0:999999999999", "?partition=99&offset=0"}) {
            problem(given().header("X-Admin-Token", TOKEN).post("/admin/dead-letters/" + CALLBACKS + "/redrive" + query),
                    404, "DEAD_LETTER_NOT_FOUND");
        }
    }

}
