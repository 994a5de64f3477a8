package dev.idem.web;

import static dev.idem.testing.Callbacks.deliver;
import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Problems.problem;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.pipeline.KafkaTestClient.ReadRecord;
import dev.idem.testing.Db;
import dev.idem.testing.RawHttp;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Input a hostile client would try: a member named twice (parsers disagree on which copy counts),
 * user ids of any length or shape, requests refused by the HTTP layer before the application.
 * Each is refused in the API's error shape, and none of them changes an order or a coupon.
 */
@QuarkusTest
class StrictInputTest {

    static final String ORDER = "{\"amountCents\":1999,\"currency\":\"CNY\"}";

    @Inject
    Pool pool;

    Db db;
    String user;
    /** Ends every Idempotency-Key this test sends, so that what it recorded can be counted. */
    String marker;

    @BeforeEach
    void setUp() {
        db = new Db(pool);
        user = "strict-" + UUID.randomUUID();
        marker = UUID.randomUUID().toString();
    }

    Response submit(String userId, String body) {
        return given().header("X-User-Id", userId).header("Idempotency-Key", UUID.randomUUID() + marker)
                .contentType("application/json").body(body).post("/api/orders");
    }

    /** Orders of the test's user, and dedup records of any key this test sent. */
    void nothingRecorded() {
        assertEquals(0, db.count("SELECT count(*) FROM orders WHERE user_id = $1", user));
        assertEquals(0, db.count("SELECT count(*) FROM dedup_record WHERE key LIKE $1", "%" + marker));
    }

    // --- a member named twice ---------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"amountCents\":5,\"amountCents\":7,\"currency\":\"CNY\"}",
        "{\"amountCents\":7,\"currency\":\"CNY\",\"amountCents\":5}",
        "{\"amountCents\":1999,\"amountCents\":1999,\"currency\":\"CNY\"}",
        "{\"amountCents\":1999,\"currency\":\"CNY\",\"currency\":\"USD\"}",
        // an escaped name is the same name
        "{\"amountCents\":5,\"amount\\u0043ents\":7,\"currency\":\"CNY\"}"
    })
    void anOrderNamingAMemberTwiceIsRefused(String body) {
        problem(submit(user, body), 400, "BAD_REQUEST").body("detail", containsString("appears more than once"));
        nothingRecorded();
    }

    @Test
    void neighboursOfARepeatedMember() {
        // nested: refused as well (no member of an order holds an object)
        problem(submit(user, "{\"amountCents\":5,\"currency\":\"CNY\",\"meta\":{\"a\":1,\"a\":2}}"), 400, "BAD_REQUEST");
        // names differ by case: two names, one of them unknown
        problem(submit(user, "{\"amountCents\":5,\"AmountCents\":7,\"currency\":\"CNY\"}"), 400, "BAD_REQUEST")
                .body("detail", containsString("unknown member"));
        nothingRecorded();
        // every member once, in any order: accepted
        submit(user, "{\"currency\":\"CNY\",\"amountCents\":1999}").then().statusCode(201)
                .body("amountCents", equalTo(1999));
    }

    @Test
    void aSignedCallbackNamingAMemberTwiceChangesNothing() {
        String order = newOrder(user, 1999);
        String other = newOrder(user, 1);
        String trade = "T-" + order;
        String paidAt = ",\"paidAt\":\"2026-11-30T10:00:00Z\"}";
        for (String body : List.of(
                "{\"tradeNo\":\"" + trade + "\",\"orderId\":\"" + order + "\",\"amountCents\":1,\"amountCents\":1999,"
                        + "\"status\":\"SUCCESS\"" + paidAt,
                "{\"tradeNo\":\"" + trade + "\",\"orderId\":\"" + order + "\",\"amountCents\":1999,"
                        + "\"status\":\"CLOSED\",\"status\":\"SUCCESS\"" + paidAt,
                "{\"tradeNo\":\"" + trade + "\",\"orderId\":\"" + other + "\",\"orderId\":\"" + order + "\","
                        + "\"amountCents\":1999,\"status\":\"SUCCESS\"" + paidAt,
                "{\"tradeNo\":\"T-x\",\"tradeNo\":\"" + trade + "\",\"orderId\":\"" + order + "\",\"amountCents\":1999,"
                        + "\"status\":\"SUCCESS\"" + paidAt)) {
            // the signature is right: only the repeated member is wrong
            problem(deliver(body), 400, "BAD_REQUEST").body("detail", containsString("appears more than once"));
        }
        for (String id : List.of(order, other)) {
            given().header("X-User-Id", user).get("/api/orders/" + id).then().statusCode(200)
                    .body("status", equalTo("WAIT_PAY"));
            assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = $1", id));
            assertEquals(0, db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1", "paid:" + id));
        }
        assertEquals(0, db.count("SELECT count(*) FROM dedup_record WHERE scope = 'payment-callback' AND key LIKE $1",
                "%" + order + "%"));
    }

    @Test
    void kafkaRecordsNamingAMemberTwiceOrAnInvalidUserAreDeadLettered() {
        String longest = "u".repeat(128);
        Map<String, String> grants = Map.of(
                "repeated-user", "{\"bizKey\":\"" + marker + "-1\",\"userId\":\"" + user + "\",\"userId\":\"thief-" + marker + "\","
                        + "\"templateId\":\"PAY-5OFF\"}",
                "repeated-key", "{\"bizKey\":\"" + marker + "-2\",\"userId\":\"" + user + "\",\"bizKey\":\"" + marker
                        + "-3\",\"templateId\":\"PAY-5OFF\"}",
                "user-too-long", Topics.grant(marker + "-4", "u".repeat(129)),
                "user-with-space", Topics.grant(marker + "-5", "a b"),
                "user-with-control", Topics.grant(marker + "-6", "a\\u0001b"));
        String order = newOrder(user, 1999);
        String payment = "{\"tradeNo\":\"T-" + order + "\",\"orderId\":\"" + order + "\",\"amountCents\":1,"
                + "\"amountCents\":1999,\"status\":\"SUCCESS\",\"paidAt\":\"2026-11-30T10:00:00Z\"}";
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            grants.forEach((kind, value) -> kafka.send("coupon-grants", 0, kind + "-" + marker, value));
            kafka.send("payment-callbacks", 0, "repeated-amount-" + marker, payment);
            // the longest user id allowed is granted: the partition kept flowing past the poison
            kafka.send("coupon-grants", 0, "longest-" + marker, Topics.grant(marker + "-7", longest));
            Topics.awaitCoupon(db, marker + "-7");

            Map<String, ReadRecord> dead = Awaitility.await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> deadLetters(kafka), found -> found.size() == grants.size() + 1);
            grants.forEach((kind, value) -> {
                ReadRecord record = dead.get(kind + "-" + marker);
                assertEquals(value, record.value(), "kept as it came");
                assertTrue(record.reason().startsWith("POISON"), record.reason());
                assertTrue(record.reason().contains(kind.startsWith("repeated") ? "appears more than once" : "userId"),
                        record.reason());
            });
            assertTrue(dead.get("repeated-amount-" + marker).reason().contains("'amountCents' appears more than once"));
        }
        assertEquals(0, db.count("SELECT count(*) FROM coupons WHERE source_key LIKE $1 AND source_key <> $2",
                marker + "-%", marker + "-7"));
        assertEquals(0, db.count("SELECT count(*) FROM coupons WHERE user_id = $1", "thief-" + marker));
        given().header("X-User-Id", user).get("/api/orders/" + order).then().body("status", equalTo("WAIT_PAY"));
    }

    private Map<String, ReadRecord> deadLetters(KafkaTestClient kafka) {
        return java.util.stream.Stream.concat(kafka.readAll("coupon-grants-dlq").stream(),
                        kafka.readAll("payment-callbacks-dlq").stream())
                .filter(record -> record.key() != null && record.key().endsWith(marker))
                .collect(Collectors.toMap(ReadRecord::key, record -> record, (a, b) -> a));
    }

    // --- user ids ---------------------------------------------------------------------------------

    @Test
    void aUserIdOf128CharactersIsServedAndOf129Refused() {
        String longest = "u".repeat(127) + "~";
        String order = submit(longest, ORDER).then().statusCode(201).body("userId", equalTo(longest))
                .extract().path("orderId");
        given().header("X-User-Id", longest).get("/api/orders/" + order).then().statusCode(200);
        given().header("X-User-Id", longest).post("/api/tokens").then().statusCode(201);
        given().header("X-User-Id", longest).get("/api/users/" + longest + "/coupons").then().statusCode(200);

        String tooLong = "u".repeat(129);
        problem(submit(tooLong, ORDER), 400, "USER_INVALID");
        problem(given().header("X-User-Id", tooLong).get("/api/orders/" + order), 400, "USER_INVALID");
        problem(given().header("X-User-Id", tooLong).post("/api/tokens"), 400, "USER_INVALID");
        problem(given().header("X-User-Id", tooLong).get("/api/users/" + tooLong + "/coupons"), 400, "USER_INVALID");
        assertEquals(0, db.count("SELECT count(*) FROM orders WHERE user_id = $1", tooLong));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a b", "a,b", "a/b", "caf\u00e9", "<script>", "a\tb", "a;b", "a\"b"})
    void aUserIdOfOtherCharactersIsRefused(String userId) {
        problem(raw("POST /api/orders", userId), 400, "USER_INVALID");
        assertEquals(0, db.count("SELECT count(*) FROM orders WHERE user_id = $1", userId));
        nothingRecorded();
    }

    @Test
    void controlCharactersInTheUserIdAreRefusedByTheHttpLayer() {
        // these never reach the application: the HTTP layer answers 400 with a bare status
        for (String userId : List.of("a\u0001b", "a\u007fb")) {
            assertEquals(400, raw("POST /api/orders", userId).status(), userId);
            assertEquals(0, db.count("SELECT count(*) FROM orders WHERE user_id = $1", userId));
        }
        assertEquals(400, raw("POST /api/orders", "a\u0000b").status(), "NUL");
        nothingRecorded();
    }

    private RawHttp.Answer raw(String requestLine, String userId) {
        return RawHttp.exchange(head(requestLine, userId), ORDER.getBytes(StandardCharsets.UTF_8));
    }

    private byte[] head(String requestLine, String userId) {
        return (requestLine + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Idempotency-Key: raw-" + UUID.randomUUID() + marker + "\r\nX-User-Id: " + userId)
                .getBytes(StandardCharsets.UTF_8);
    }

    // --- errors raised before the application --------------------------------------------------

    @Test
    void aLongRequestTargetIs414() {
        String prefix = "/api/orders/";
        // exactly the limit (4096 characters): served, and no such order
        problem(given().header("X-User-Id", user).get(prefix + "o".repeat(4096 - prefix.length())),
                404, "ORDER_NOT_FOUND");
        problem(given().header("X-User-Id", user).get(prefix + "o".repeat(4097 - prefix.length())),
                414, "URI_TOO_LONG");
        problem(given().header("X-User-Id", user).header("Idempotency-Key", marker).contentType("application/json")
                .body(ORDER).post("/api/orders?pad=" + "p".repeat(5000)), 414, "URI_TOO_LONG");
        // past the HTTP layer's own limit (64 KiB) the answer is its bare 414
        assertEquals(414, raw("GET /api/orders/" + "o".repeat(70_000), user).status());
        nothingRecorded();
    }

    @Test
    void largeHeadersAre431() {
        given().header("X-User-Id", user).header("X-Pad", "p".repeat(15_000)).get("/api/orders/none")
                .then().statusCode(404);
        problem(given().header("X-User-Id", user).header("Idempotency-Key", marker).header("X-Pad", "p".repeat(21_000))
                .contentType("application/json").body(ORDER).post("/api/orders"), 431, "HEADERS_TOO_LARGE");
        problem(given().header("X-User-Id", user).header("X-Pad-1", "p".repeat(11_000))
                .header("X-Pad-2", "p".repeat(11_000)).get("/api/orders/none"), 431, "HEADERS_TOO_LARGE");
        nothingRecorded();
    }

    @Test
    void aChunkedBodyPastTheLimitIs413() {
        String huge = "{\"amountCents\":1999,\"currency\":\"CNY\",\"pad\":\"" + "x".repeat(70 * 1024) + "\"}";
        problem(RawHttp.exchangeChunked(head("POST /api/orders", user), huge.getBytes(StandardCharsets.UTF_8)),
                413, "PAYLOAD_TOO_LARGE");
        nothingRecorded();
        // a chunked body within the limit is read as any other
        assertEquals(201, RawHttp.exchangeChunked(head("POST /api/orders", user),
                ORDER.getBytes(StandardCharsets.UTF_8)).status());
    }

    @Test
    void unsupportedMethodsTypesAndAcceptsAreProblems() {
        problem(given().header("X-User-Id", user).patch("/api/orders/none"), 405, "METHOD_NOT_ALLOWED");
        problem(given().header("X-User-Id", user).put("/api/orders"), 405, "METHOD_NOT_ALLOWED");
        problem(raw("BREW /api/orders", user), 405, "METHOD_NOT_ALLOWED");
        problem(given().header("X-User-Id", user).accept("application/xml").get("/api/orders/none"),
                406, "NOT_ACCEPTABLE");
        problem(given().header("X-User-Id", user).header("Idempotency-Key", marker).contentType("application/xml")
                .body("<order/>").post("/api/orders"), 415, "UNSUPPORTED_MEDIA_TYPE");
        problem(given().contentType("text/plain").body("SUCCESS").post("/api/payments/callback"),
                415, "UNSUPPORTED_MEDIA_TYPE");
        nothingRecorded();
    }
}
