package dev.idem.testing;

import static io.restassured.RestAssured.given;

import io.restassured.response.Response;
import java.util.UUID;

/** Signed REST deliveries and fresh orders, for tests that drive one payment at a time. */
public final class Callbacks {

    private Callbacks() {}

    public static Response deliver(String body) {
        long ts = Gateway.now();
        return deliver(body, ts, Gateway.sign(ts, body));
    }

    public static Response deliver(String body, long timestamp, String signature) {
        return given().contentType("application/json")
                .header("X-Pay-Timestamp", Long.toString(timestamp))
                .header("X-Pay-Signature", signature)
                .body(body)
                .post("/api/payments/callback");
    }

    public static String newOrder(String user, long amountCents) {
        return given().header("X-User-Id", user).header("Idempotency-Key", UUID.randomUUID().toString())
                .contentType("application/json")
                .body("{\"amountCents\":" + amountCents + ",\"currency\":\"CNY\"}")
                .post("/api/orders").then().statusCode(201).extract().path("orderId");
    }
}
