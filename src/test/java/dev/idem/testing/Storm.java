package dev.idem.testing;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.Set;
import java.util.function.Supplier;
import org.awaitility.Awaitility;

/**
 * The incident, replayed: fresh orders, then every payment notification delivered several times
 * concurrently and in mixed order, then exact accounting in the database and the metrics.
 */
public final class Storm {

    public static final long AMOUNT = 1999;

    private final Http http = new Http();
    private final Db db;
    public final String user = "storm-" + UUID.randomUUID();
    public final List<String> orderIds = new ArrayList<>();

    public Storm(Db db) {
        this.db = db;
    }

    public Storm createOrders(int count) {
        List<Supplier<HttpRequest>> submits = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String key = "storm-order-" + i;
            submits.add(() -> Http.post("/api/orders", "{\"amountCents\":" + AMOUNT + ",\"currency\":\"CNY\"}")
                    .header("X-User-Id", user).header("Idempotency-Key", key).build());
        }
        for (Http.Answer answer : http.all(submits, 32, null)) {
            assertEquals(201, answer.status(), answer.body());
            orderIds.add(new JsonObject(answer.body()).getString("orderId"));
        }
        return this;
    }

    public static String tradeNo(String orderId) {
        return "T-" + orderId;
    }

    /** Delivers each order's SUCCESS {@code copies} times, shuffled, signed afresh each time. */
    public List<Http.Answer> deliver(int copies, int concurrency, Runnable midway) {
        List<String> deliveries = new ArrayList<>();
        for (String orderId : orderIds) {
            for (int i = 0; i < copies; i++) {
                deliveries.add(orderId);
            }
        }
        Collections.shuffle(deliveries, new Random(42));
        List<Http.Answer> answers = send(deliveries, concurrency, midway);
        assertEveryDeliveryAcknowledgedOnce(deliveries, answers, copies);
        return answers;
    }

    /** One more delivery of each order's payment, answers in order; the caller judges them. */
    public List<Http.Answer> deliverOnce() {
        return send(orderIds, 32, null);
    }

    private List<Http.Answer> send(List<String> deliveries, int concurrency, Runnable midway) {
        List<Supplier<HttpRequest>> requests = new ArrayList<>();
        for (String orderId : deliveries) {
            String body = Gateway.callback(tradeNo(orderId), orderId, AMOUNT, "SUCCESS");
            requests.add(() -> Gateway.signed(Http.post("/api/payments/callback", body), Gateway.SECRET, body));
        }
        return http.all(requests, concurrency, midway);
    }

    /** Every answer 200 SUCCESS; per order exactly one first delivery and copies-1 duplicates. */
    private void assertEveryDeliveryAcknowledgedOnce(List<String> deliveries, List<Http.Answer> answers, int copies) {
        Map<String, Integer> firsts = new java.util.HashMap<>();
        for (int i = 0; i < answers.size(); i++) {
            if (firstDelivery(answers.get(i))) {
                firsts.merge(deliveries.get(i), 1, Integer::sum);
            }
        }
        for (String orderId : orderIds) {
            assertEquals(1, firsts.getOrDefault(orderId, 0), "first deliveries answered for " + orderId);
        }
        assertEquals(orderIds.size() * copies, answers.size());
    }

    /** A callback's answer, which must be 200 SUCCESS: whether it took the delivery as the first, not a duplicate. */
    public static boolean firstDelivery(Http.Answer answer) {
        assertEquals(200, answer.status(), answer.body());
        JsonObject body = new JsonObject(answer.body());
        assertEquals("SUCCESS", body.getString("code"), answer.body());
        return !body.getBoolean("duplicate", false);
    }

    /**
     * The grants travel outbox → Kafka → consumer; wait until each order's coupon arrived, then
     * check there is exactly one per order, through the API as its owner sees it.
     */
    public void assertOneCouponPerOrder() {
        String[] bizKeys = orderIds.stream().map(id -> "paid:" + id).toArray(String[]::new);
        Awaitility.await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() ->
                db.count("SELECT count(*) FROM coupons WHERE source_key = ANY($1)", (Object) bizKeys) >= bizKeys.length);
        assertEquals(bizKeys.length, db.count("SELECT count(*) FROM coupons WHERE source_key = ANY($1)", (Object) bizKeys));
        List<String> sources = given().header("X-User-Id", user).get("/api/users/" + user + "/coupons")
                .then().statusCode(200).extract().jsonPath().getList("sourceKey", String.class);
        assertEquals(Set.of(bizKeys), Set.copyOf(sources));
        assertEquals(bizKeys.length, sources.size());
    }

    /** What the incident must come to: each order paid exactly once, and one coupon for each. */
    public void assertPaidOnceWithOneCoupon() {
        assertPaidExactlyOnce();
        assertOneCouponPerOrder();
    }

    /** Each order PAID once with its own trade number, one grant event each, one DONE record each. */
    public void assertPaidExactlyOnce() {
        assertPaidOnceWithOneGrantEvent();
        String[] keys = dedupKeys();
        assertEquals(keys.length, db.count("SELECT count(*) FROM dedup_record WHERE scope = 'payment-callback' AND key = ANY($1) AND status = 'DONE'", (Object) keys));
    }

    public String[] dedupKeys() {
        return orderIds.stream().map(id -> tradeNo(id) + ":SUCCESS").toArray(String[]::new);
    }

    /** Each order PAID once with its own trade number and one grant event, and no anomaly. */
    public void assertPaidOnceWithOneGrantEvent() {
        String[] ids = orderIds.toArray(String[]::new);
        int n = ids.length;
        assertEquals(n, db.count("SELECT count(*) FROM orders WHERE id = ANY($1) AND status = 'PAID' AND trade_no = 'T-' || id", (Object) ids));
        String[] bizKeys = orderIds.stream().map(id -> "paid:" + id).toArray(String[]::new);
        assertEquals(n, db.count("SELECT count(*) FROM outbox_event WHERE topic = 'coupon-grants' AND event_key = ANY($1)", (Object) bizKeys));
        assertEquals(n, db.count("SELECT count(DISTINCT event_key) FROM outbox_event WHERE event_key = ANY($1)", (Object) bizKeys));
        assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = ANY($1)", (Object) ids));
    }
}
