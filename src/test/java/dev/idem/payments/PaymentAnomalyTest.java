package dev.idem.payments;

import static dev.idem.testing.Callbacks.deliver;
import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.Db;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Notifications that contradict the order: recorded, counted, answered SUCCESS so the gateway
 * stops, and never allowed to move the order wrongly.
 */
@QuarkusTest
class PaymentAnomalyTest {

    @Inject
    Db db;

    final String user = "anomaly-" + UUID.randomUUID();

    String status(String orderId) {
        return db.string("SELECT status FROM orders WHERE id = $1", orderId);
    }

    long anomalies(String orderId, String kind) {
        return db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = $1 AND kind = $2", orderId, kind);
    }

    long grants(String orderId) {
        return db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1", "paid:" + orderId);
    }

    @Test
    void amountMismatchLeavesTheOrderUnpaid() {
        String order = newOrder(user, 1999);

        deliver(callback("T-" + order, order, 999, "SUCCESS")).then()
                .statusCode(200).body("code", equalTo("SUCCESS")).body("anomaly", equalTo("AMOUNT_MISMATCH"));

        assertEquals("WAIT_PAY", status(order));
        assertEquals(1, anomalies(order, "AMOUNT_MISMATCH"));
        assertEquals(0, grants(order));
        given().header("X-User-Id", user).get("/api/orders/" + order).then()
                .body("status", equalTo("WAIT_PAY")).body("tradeNo", nullValue());
    }

    @Test
    void secondTradeForAPaidOrderIsADoublePayment() {
        String order = newOrder(user, 1999);
        deliver(callback("T1-" + order, order, 1999, "SUCCESS")).then()
                .statusCode(200).body("code", equalTo("SUCCESS")).body("anomaly", nullValue());

        deliver(callback("T2-" + order, order, 1999, "SUCCESS")).then()
                .statusCode(200).body("anomaly", equalTo("DOUBLE_PAYMENT"));

        assertEquals("PAID", status(order));
        assertEquals("T1-" + order, db.string("SELECT trade_no FROM orders WHERE id = $1", order));
        assertEquals(1, anomalies(order, "DOUBLE_PAYMENT"));
        assertEquals(1, grants(order));
    }

    @Test
    void paymentAfterCloseIsRecordedAndTheOrderStaysClosed() {
        String order = newOrder(user, 1999);
        deliver(callback("T-" + order, order, 1999, "CLOSED")).then()
                .statusCode(200).body("code", equalTo("SUCCESS")).body("anomaly", nullValue());
        deliver(callback("T-" + order, order, 1999, "CLOSED")).then()
                .statusCode(200).body("duplicate", equalTo(true));

        deliver(callback("T-" + order, order, 1999, "SUCCESS")).then()
                .statusCode(200).body("anomaly", equalTo("PAID_AFTER_CLOSE"));

        assertEquals("CLOSED", status(order));
        assertEquals(1, anomalies(order, "PAID_AFTER_CLOSE"));
        assertEquals(0, grants(order));
    }

    @Test
    void closeAfterPayIsAnIllegalTransition() {
        String order = newOrder(user, 1999);
        deliver(callback("T-" + order, order, 1999, "SUCCESS")).then().statusCode(200);

        deliver(callback("T-" + order, order, 1999, "CLOSED")).then()
                .statusCode(200).body("anomaly", equalTo("ILLEGAL_TRANSITION"));

        assertEquals("PAID", status(order));
        assertEquals(1, anomalies(order, "ILLEGAL_TRANSITION"));
    }

    @Test
    void aRetriedAnomalyIsAnsweredAgainAndRecordedOnce() {
        String order = newOrder(user, 1999);
        String body = callback("T-" + order, order, 1, "SUCCESS");
        deliver(body).then().statusCode(200).body("anomaly", equalTo("AMOUNT_MISMATCH"));

        for (int i = 0; i < 3; i++) {
            deliver(body).then().statusCode(200)
                    .body("code", equalTo("SUCCESS"))
                    .body("anomaly", equalTo("AMOUNT_MISMATCH"))
                    .body("duplicate", equalTo(true));
        }
        assertEquals(1, anomalies(order, "AMOUNT_MISMATCH"));
    }

    @Test
    void aTradeNumberPaysOnlyOneOrder() {
        String first = newOrder(user, 1999);
        String second = newOrder(user, 1999);
        String trade = "T-shared-" + first;
        deliver(callback(trade, first, 1999, "SUCCESS")).then().statusCode(200).body("anomaly", nullValue());

        deliver(callback(trade, second, 1999, "SUCCESS")).then().statusCode(422)
                .body("code", equalTo("IDEMPOTENCY_KEY_REUSED"));

        assertEquals("WAIT_PAY", status(second));
        assertEquals("PAID", status(first));
    }
}
