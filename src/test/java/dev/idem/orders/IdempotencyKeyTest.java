package dev.idem.orders;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testing.Db;
import dev.idem.testing.Http;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.http.HttpRequest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

/** Stripe's Idempotency-Key behaviour on order submits, per user. */
@QuarkusTest
class IdempotencyKeyTest {

    static final String BODY = "{\"amountCents\":1999,\"currency\":\"CNY\"}";

    @Inject
    Pool pool;

    static Response submit(String user, String key, String body) {
        return given().header("X-User-Id", user).header("Idempotency-Key", key)
                .contentType("application/json").body(body)
                .post("/api/orders");
    }

    static String user() {
        return "u-" + UUID.randomUUID();
    }

    long ordersOf(String user) {
        return new Db(pool).count("SELECT count(*) FROM orders WHERE user_id = $1", user);
    }

    @Test
    void sameKeyAndBodyReplaysTheStoredAnswer() {
        String user = user();
        Response first = submit(user, "k-1", BODY);
        first.then().statusCode(201)
                .header("Idempotent-Replayed", nullValue())
                .body("status", equalTo("WAIT_PAY"))
                .body("userId", equalTo(user))
                .body("amountCents", equalTo(1999))
                .body("currency", equalTo("CNY"))
                .body("tradeNo", nullValue())
                .body("paidAt", nullValue());

        Response again = submit(user, "k-1", "{ \"currency\": \"CNY\", \"amountCents\": 1999 }");
        again.then().statusCode(201).header("Idempotent-Replayed", "true");

        assertEquals(new JsonObject(first.asString()), new JsonObject(again.asString()));
        assertEquals(1, ordersOf(user));
        given().header("X-User-Id", user).get("/api/orders/" + first.path("orderId"))
                .then().statusCode(200).body("orderId", equalTo(first.path("orderId")));
    }

    @Test
    void sameKeyWithAnotherBodyIsRefused() {
        String user = user();
        submit(user, "k-2", BODY).then().statusCode(201);

        submit(user, "k-2", "{\"amountCents\":2999,\"currency\":\"CNY\"}").then()
                .statusCode(422)
                .contentType("application/problem+json")
                .body("code", equalTo("IDEMPOTENCY_KEY_REUSED"))
                .body("status", equalTo(422));
        assertEquals(1, ordersOf(user));
    }

    @Test
    void keysBelongToTheirUser() {
        String alice = user();
        String bob = user();
        String aliceOrder = submit(alice, "shared-key", BODY).then().statusCode(201).extract().path("orderId");
        Response bobs = submit(bob, "shared-key", BODY);
        bobs.then().statusCode(201).header("Idempotent-Replayed", nullValue()).body("userId", equalTo(bob));
        String bobOrder = bobs.path("orderId");

        assertTrue(!aliceOrder.equals(bobOrder));
        assertEquals(1, ordersOf(alice));
        assertEquals(1, ordersOf(bob));
        given().header("X-User-Id", bob).get("/api/orders/" + aliceOrder).then()
                .statusCode(404).body("code", equalTo("ORDER_NOT_FOUND"));
        given().header("X-User-Id", alice).get("/api/orders/" + bobOrder).then()
                .statusCode(404).body("code", equalTo("ORDER_NOT_FOUND"));
        given().header("X-User-Id", alice).get("/api/orders/no-such-order").then()
                .statusCode(404).body("code", equalTo("ORDER_NOT_FOUND"));
    }

    @Test
    void fiftyConcurrentRequestsWithOneKeyCreateOneOrder() {
        String user = user();
        List<Supplier<HttpRequest>> requests = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            requests.add(() -> Http.post("/api/orders", BODY)
                    .header("X-User-Id", user).header("Idempotency-Key", "burst").build());
        }

        List<Http.Answer> answers = new Http().all(requests, 50, null);

        Set<String> orderIds = new HashSet<>();
        int fresh = 0;
        for (Http.Answer answer : answers) {
            if (answer.status() == 201) {
                orderIds.add(new JsonObject(answer.body()).getString("orderId"));
                fresh += answer.replayed() == null ? 1 : 0;
            } else {
                assertEquals(409, answer.status(), answer.body());
                assertEquals("IDEMPOTENCY_KEY_IN_FLIGHT", new JsonObject(answer.body()).getString("code"));
            }
        }
        assertEquals(1, fresh, "exactly one answer is the first execution");
        assertEquals(1, orderIds.size(), "every 201 names the same order");
        assertEquals(1, ordersOf(user));
    }

    /** A first request still in its transaction: the same key answers 409 with Retry-After, then replays. */
    @Test
    void keyHeldByAnUnfinishedRequestAnswersInFlight() throws Exception {
        String user = user();
        String url = ConfigProvider.getConfig().getValue("quarkus.datasource.jdbc.url", String.class);
        try (Connection held = DriverManager.getConnection(url, "idem", "idem")) {
            held.setAutoCommit(false);
            try (PreparedStatement claim = held.prepareStatement("""
                    INSERT INTO dedup_record (scope, key, fingerprint, status, lease_until, created_at, updated_at, expires_at)
                    VALUES ('order-submit', ?, 'unfinished', 'PROCESSING', now(), now(), now(), now() + interval '1 day')""")) {
                claim.setString(1, user + ":held");
                claim.executeUpdate();
            }

            submit(user, "held", BODY).then()
                    .statusCode(409)
                    .header("Retry-After", "1")
                    .body("code", equalTo("IDEMPOTENCY_KEY_IN_FLIGHT"));

            held.rollback();
        }
        submit(user, "held", BODY).then().statusCode(201);
        assertEquals(1, ordersOf(user));
    }
}
