package dev.idem.testing;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

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

    /**
     * A gateway retrying in a hurry: {@code orders} new orders of {@code user}, the notification
     * {@code notifying} makes for each sent {@code copies} times, all at once. Every answer is 200
     * with {@code acknowledgement}; the orders are returned once each has its coupon.
     */
    public static List<String> notifiedConcurrently(Db db, String user, long amountCents, int orders, int copies,
            Function<String, Supplier<HttpRequest>> notifying, String acknowledgement) {
        List<String> ids = new ArrayList<>();
        List<Supplier<HttpRequest>> deliveries = new ArrayList<>();
        for (int i = 0; i < orders; i++) {
            String order = newOrder(user, amountCents);
            ids.add(order);
            Supplier<HttpRequest> notification = notifying.apply(order);
            for (int copy = 0; copy < copies; copy++) {
                deliveries.add(notification);
            }
        }
        for (Http.Answer answer : new Http().all(deliveries, 60, null)) {
            assertEquals(200, answer.status(), answer.body());
            assertEquals(acknowledgement, answer.body());
        }
        for (String order : ids) {
            Topics.awaitCoupon(db, "paid:" + order);
        }
        return ids;
    }
}
