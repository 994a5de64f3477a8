package dev.idem;

import static dev.idem.testing.Callbacks.deliver;
import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static dev.idem.testing.Problems.problem;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.Db;
import dev.idem.testing.Gateway;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every bad input gets a problem+json answer with its code, and none of them changes an order. */
@QuarkusTest
class BadInputTest {

    static final String ORDER = "{\"amountCents\":1999,\"currency\":\"CNY\"}";

    @Inject
    Db db;

    final String user = "bad-" + UUID.randomUUID();

    long ordersOfUser() {
        return db.count("SELECT count(*) FROM orders WHERE user_id = $1", user);
    }

    @Test
    void ordersNeedAUser() {
        problem(given().header("Idempotency-Key", "k").contentType("application/json").body(ORDER)
                .post("/api/orders"), 401, "USER_MISSING");
        problem(given().header("X-User-Id", "  ").header("Idempotency-Key", "k").contentType("application/json")
                .body(ORDER).post("/api/orders"), 401, "USER_MISSING");
        problem(given().get("/api/orders/anything"), 401, "USER_MISSING");
    }

    @Test
    void ordersNeedExactlyOneGuard() {
        problem(given().header("X-User-Id", user).contentType("application/json").body(ORDER)
                .post("/api/orders"), 400, "IDEMPOTENCY_KEY_MISSING");
        problem(given().header("X-User-Id", user).header("Idempotency-Key", "k").header("Idempotency-Token", "t")
                .contentType("application/json").body(ORDER).post("/api/orders"), 400, "IDEMPOTENCY_KEY_AMBIGUOUS");
        problem(submit("x".repeat(256), ORDER), 400, "BAD_REQUEST");
        problem(submit("tab\there", ORDER), 400, "BAD_REQUEST");
        assertEquals(0, ordersOfUser());
    }

    Response submit(String key, String body) {
        return given().header("X-User-Id", user).header("Idempotency-Key", key)
                .contentType("application/json").body(body).post("/api/orders");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"amountCents\":1999,\"currency\":\"CNY\"",
        "not json",
        "[]",
        "null",
        "{}",
        "{\"amountCents\":1999,\"currency\":\"CNY\",\"coupon\":\"FREE\"}",
        "{\"amountCents\":0,\"currency\":\"CNY\"}",
        "{\"amountCents\":-5,\"currency\":\"CNY\"}",
        "{\"amountCents\":100000001,\"currency\":\"CNY\"}",
        "{\"amountCents\":\"1999\",\"currency\":\"CNY\"}",
        "{\"amountCents\":19.99,\"currency\":\"CNY\"}",
        "{\"amountCents\":1999}",
        "{\"amountCents\":1999,\"currency\":\"cny\"}",
        "{\"amountCents\":1999,\"currency\":\"CNYY\"}",
        "{\"amountCents\":1999,\"currency\":156}",
        "{\"amountCents\":1999,\"currency\":\"CNY\"} trailing"
    })
    void malformedOrderBodiesAreRefused(String body) {
        problem(submit(UUID.randomUUID().toString(), body), 400, "BAD_REQUEST");
        assertEquals(0, ordersOfUser());
    }

    @Test
    void oversizedAndMistypedBodiesAreRefused() {
        String huge = "{\"amountCents\":1999,\"currency\":\"CNY\",\"pad\":\"" + "x".repeat(70 * 1024) + "\"}";
        problem(submit("big", huge), 413, "PAYLOAD_TOO_LARGE");
        problem(given().header("X-User-Id", user).header("Idempotency-Key", "plain").contentType("text/plain")
                .body(ORDER).post("/api/orders"), 415, "UNSUPPORTED_MEDIA_TYPE");
        problem(given().header("X-User-Id", user).get("/api/nowhere"), 404, "NOT_FOUND");
        problem(given().header("X-User-Id", user).delete("/api/orders"), 405, "METHOD_NOT_ALLOWED");
        assertEquals(0, ordersOfUser());
    }

    @Test
    void badCallbacksChangeNoOrder() {
        String order = newOrder(user, 1999);
        String body = callback("T-" + order, order, 1999, "SUCCESS");
        long now = Gateway.now();

        problem(given().contentType("application/json").body(body).post("/api/payments/callback"),
                401, "SIGNATURE_INVALID");
        problem(deliver(body, now, Gateway.sign("not-the-secret", now, body)), 401, "SIGNATURE_INVALID");
        problem(deliver(body, now, Gateway.sign(now, body.replace("1999", "1"))), 401, "SIGNATURE_INVALID");
        problem(deliver(body.replace("1999", "1"), now, Gateway.sign(now, body)), 401, "SIGNATURE_INVALID");
        // well outside the 300 s window either way; the exact boundary is a unit test with a fixed clock
        problem(deliver(body, now - 400, Gateway.sign(now - 400, body)), 401, "SIGNATURE_INVALID");
        problem(deliver(body, now + 400, Gateway.sign(now + 400, body)), 401, "SIGNATURE_INVALID");
        problem(deliver(body, now, "zz-not-hex"), 401, "SIGNATURE_INVALID");

        for (String malformed : new String[] {
            "{\"tradeNo\":\"T\",",
            body.replace("}", ",\"extra\":1}"),
            body.replace("SUCCESS", "PAID"),
            body.replace("\"orderId\":\"" + order + "\",", ""),
            body.replace("1999", "\"1999\""),
            body.replace("2026-11-30T10:00:00Z", "yesterday")
        }) {
            problem(deliver(malformed), 400, "BAD_REQUEST");
        }
        problem(deliver(callback("T-unknown-" + order, "no-such-order", 1999, "SUCCESS")), 404, "ORDER_NOT_FOUND");
        String huge = body.replace("}", ",\"pad\":\"" + "x".repeat(70 * 1024) + "\"}");
        problem(deliver(huge), 413, "PAYLOAD_TOO_LARGE");

        given().header("X-User-Id", user).get("/api/orders/" + order).then()
                .statusCode(200).body("status", equalTo("WAIT_PAY"));
        assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = $1", order));
        assertEquals(0, db.count("SELECT count(*) FROM dedup_record WHERE scope = 'payment-callback' AND key LIKE $1",
                "%" + order + "%"));
        assertEquals(0, db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1", "paid:" + order));

        deliver(body).then().statusCode(200).body("code", equalTo("SUCCESS"));
        given().header("X-User-Id", user).get("/api/orders/" + order).then().body("status", equalTo("PAID"));
    }

    @Test
    void unknownPathsAnswerProblems() {
        problem(given().get("/nowhere"), 404, "NOT_FOUND");
    }
}
