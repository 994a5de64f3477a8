package dev.idem.ops;

import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.DeadLetterAdmin.at;
import static dev.idem.testing.DeadLetterAdmin.redrive;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Db;
import dev.idem.testing.DeadLetterAdmin;
import dev.idem.testing.Gateway;
import dev.idem.testing.Metrics;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Dead letters sent back through the pipeline: applied once when they can be, back in the
 * dead-letter topic when they are still poison, and never sent twice.
 */
@QuarkusTest
class DeadLetterRedriveTest {

    static final String CALLBACKS = "payment-callbacks";
    static final String GRANTS = "coupon-grants";
    static final Map<String, String> CALLBACKS_CHANNEL = Map.of("channel", CALLBACKS);

    @Inject
    Db db;

    @AutoClose
    final KafkaTestClient kafka = new KafkaTestClient();
    final String user = "dead-letters-" + UUID.randomUUID();

    @Test
    void aCallbackForAnOrderNotYetThereIsRedrivenOnceItIsAndPaysItOnce() {
        // Order ids are the service's to choose, so the callback can only name an order the API
        // made: the order is kept out of sight until its callback was dead-lettered.
        String order = newOrder(user, 1999);
        String hidden = "hidden-" + order;
        db.rows("UPDATE orders SET id = $2 WHERE id = $1", order, hidden);
        String trade = "T-" + order;
        String body = Gateway.callback(trade, order, 1999, "SUCCESS");
        kafka.send(CALLBACKS, null, trade, body);

        Map<String, Object> dead = DeadLetterAdmin.await(CALLBACKS, trade, 1).get(0);
        assertTrue(((String) dead.get("reason")).startsWith("ORDER_NOT_FOUND"), (String) dead.get("reason"));
        assertEquals(body, dead.get("value"));
        assertEquals("utf-8", dead.get("valueEncoding"));
        assertEquals(CALLBACKS, ((Map<?, ?>) dead.get("source")).get("topic"));
        assertNull(dead.get("redrivenAt"));
        assertEquals(0, db.count("SELECT count(*) FROM coupons WHERE order_id = $1", order));

        db.rows("UPDATE orders SET id = $2 WHERE id = $1", hidden, order);
        Metrics before = Metrics.scrape();

        JsonPath first = redrive(CALLBACKS, "?offset=" + at(dead));
        assertReport(first, 1, 1, 0, 0);
        Topics.awaitCoupon(db, "paid:" + order);
        given().header("X-User-Id", user).get("/api/orders/" + order).then()
                .statusCode(200).body("status", equalTo("PAID")).body("tradeNo", equalTo(trade));

        // again, in both forms: already re-driven, so nothing is sent
        assertReport(redrive(CALLBACKS, "?offset=" + at(dead)), 1, 0, 1, 0);
        assertReport(redrive(CALLBACKS, "?partition=" + dead.get("partition") + "&offset=" + dead.get("offset")),
                1, 0, 1, 0);
        Metrics after = Metrics.scrape();
        assertEquals(1, after.delta(before, "idem_dead_letters_redriven_total", CALLBACKS_CHANNEL));
        assertEquals(2, after.delta(before, "idem_dead_letters_redrive_skipped_total",
                Map.of("channel", CALLBACKS, "why", "already-redriven")));

        // and all of the topic: this one is among the skipped
        JsonPath all = redrive(CALLBACKS, "");
        assertTrue(all.getInt("skipped") >= 1, all.prettify());
        assertEquals(all.getInt("examined"),
                all.getInt("redriven") + all.getInt("skipped") + all.getInt("returned"), all.prettify());

        drainCallbacks();
        assertEquals(1, db.count("SELECT count(*) FROM orders WHERE id = $1 AND status = 'PAID'", order));
        assertEquals(1, db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1", "paid:" + order));
        assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE order_id = $1", order));
        assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = $1", order));
        assertEquals(1, db.count("""
                SELECT count(*) FROM dead_letter_redrive
                WHERE dead_letter_topic = $1 AND dead_letter_partition = $2 AND dead_letter_offset = $3""",
                CALLBACKS + "-dlq", dead.get("partition"), ((Number) dead.get("offset")).longValue()));
        List<Map<String, Object>> left = DeadLetterAdmin.withKey(CALLBACKS, trade);
        assertEquals(1, left.size(), "applied, so not dead-lettered again: " + left);
        assertNotNull(left.get(0).get("redrivenAt"));
    }

    @Test
    void poisonRedrivenComesBackWithItsReasonAndRedrivingAllAgainSendsNothingMore() {
        String key = "poison-" + UUID.randomUUID();
        String value = "not json " + key;
        kafka.send(CALLBACKS, null, key, value);
        Map<String, Object> original = DeadLetterAdmin.await(CALLBACKS, key, 1).get(0);
        assertTrue(((String) original.get("reason")).startsWith("POISON"), (String) original.get("reason"));

        JsonPath all = redrive(CALLBACKS, "");
        assertTrue(all.getInt("redriven") >= 1, all.prettify());

        List<Map<String, Object>> both = DeadLetterAdmin.await(CALLBACKS, key, 2);
        Map<String, Object> back = both.get(0);
        assertEquals(at(original), at(both.get(1)), "newest first: the one that came back, then the original");
        assertEquals(value, back.get("value"));
        assertTrue(((String) back.get("reason")).startsWith("POISON"), (String) back.get("reason"));
        assertEquals(at(original), back.get("redrivenFrom"));
        assertNull(back.get("redrivenAt"));
        assertNotNull(both.get(1).get("redrivenAt"));

        // the original was re-driven, the one that came back is left until it is named
        JsonPath again = redrive(CALLBACKS, "");
        assertTrue(again.getInt("skipped") >= 1, again.prettify());
        assertTrue(again.getInt("returned") >= 1, again.prettify());
        assertReport(redrive(CALLBACKS, "?offset=" + at(original)), 1, 0, 1, 0);
        drainCallbacks();
        assertEquals(2, DeadLetterAdmin.withKey(CALLBACKS, key).size(), "nothing more was sent");

        // named, it is sent once more (after a fix, say), and comes back once more
        assertReport(redrive(CALLBACKS, "?offset=" + at(back)), 1, 1, 0, 0);
        List<Map<String, Object>> three = DeadLetterAdmin.await(CALLBACKS, key, 3);
        assertEquals(at(back), three.get(0).get("redrivenFrom"));
    }

    @Test
    void aGrantThatIsNotTextIsRedrivenByteForByteAndComesBackAsItWas() {
        String key = "binary-" + UUID.randomUUID();
        byte[] value = {(byte) 0xff, (byte) 0xfe, 'n', 'o', 't', ' ', 'u', 't', 'f', '8', (byte) 0xc3};
        kafka.sendBytes(GRANTS, null, key, value);

        Map<String, Object> dead = DeadLetterAdmin.await(GRANTS, key, 1).get(0);
        assertEquals("base64", dead.get("valueEncoding"));
        assertArrayEquals(value, Base64.getDecoder().decode((String) dead.get("value")));
        assertTrue(((String) dead.get("reason")).startsWith("POISON"), (String) dead.get("reason"));

        assertReport(redrive(GRANTS, "?offset=" + at(dead)), 1, 1, 0, 0);
        Map<String, Object> back = DeadLetterAdmin.await(GRANTS, key, 2).get(0);
        assertArrayEquals(value, Base64.getDecoder().decode((String) back.get("value")));
        assertEquals(at(dead), back.get("redrivenFrom"));

        assertReport(redrive(GRANTS, "?offset=" + at(dead)), 1, 0, 1, 0);
        Topics.drainGrants(kafka, db, user);
        assertEquals(2, DeadLetterAdmin.withKey(GRANTS, key).size(), "nothing more was sent");
    }

    @Test
    void concurrentRedrivesOfOneDeadLetterSendItOnce() throws Exception {
        String key = "concurrent-" + UUID.randomUUID();
        kafka.send(GRANTS, null, key, "not json " + key);
        Map<String, Object> dead = DeadLetterAdmin.await(GRANTS, key, 1).get(0);

        ExecutorService operators = Executors.newFixedThreadPool(4);
        List<JsonPath> reports = new ArrayList<>();
        try {
            List<Future<JsonPath>> answers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                answers.add(operators.submit(() -> redrive(GRANTS, "?offset=" + at(dead))));
            }
            for (Future<JsonPath> answer : answers) {
                reports.add(answer.get());
            }
        } finally {
            operators.shutdown();
        }
        assertEquals(1, reports.stream().mapToInt(report -> report.getInt("redriven")).sum());
        assertEquals(3, reports.stream().mapToInt(report -> report.getInt("skipped")).sum());

        DeadLetterAdmin.await(GRANTS, key, 2);
        Topics.drainGrants(kafka, db, user);
        assertEquals(2, DeadLetterAdmin.withKey(GRANTS, key).size(), "sent once, back once");
    }

    private static void assertReport(JsonPath report, int examined, int redriven, int skipped, int returned) {
        String all = report.prettify();
        assertEquals(examined, report.getInt("examined"), all);
        assertEquals(redriven, report.getInt("redriven"), all);
        assertEquals(skipped, report.getInt("skipped"), all);
        assertEquals(returned, report.getInt("returned"), all);
    }

    /**
     * A last payment on every partition of payment-callbacks: once each is applied, whatever was
     * sent there before it has been consumed, since a partition is consumed in order.
     */
    private void drainCallbacks() {
        for (int partition = 0; partition < Topics.PARTITIONS; partition++) {
            String sentinel = newOrder(user + "-sentinel", 1999);
            kafka.send(CALLBACKS, partition, "T-" + sentinel, Gateway.callback("T-" + sentinel, sentinel, 1999, "SUCCESS"));
            Topics.awaitCoupon(db, "paid:" + sentinel);
        }
    }
}
