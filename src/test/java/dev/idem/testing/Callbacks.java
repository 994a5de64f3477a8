package dev.idem.testing;

import static io.restassured.RestAssured.given;

import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
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
        return newOrder(user, amountCents, null);
    }

    /** A new order of {@code user} to be paid through {@code gateway}; null names none. */
    public static String newOrder(String user, long amountCents, String gateway) {
        return given().header("X-User-Id", user).header("Idempotency-Key", UUID.randomUUID().toString())
                .contentType("application/json").body(orderBody(amountCents, gateway))
                .post("/api/orders").then().statusCode(201).extract().path("orderId");
    }

    /** The body of {@code POST /api/orders}. */
    public static String orderBody(long amountCents, String gateway) {
        JsonObject body = new JsonObject().put("amountCents", amountCents).put("currency", "CNY");
        return (gateway == null ? body : body.put("gateway", gateway)).encode();
    }
}
