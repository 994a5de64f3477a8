package dev.idem.payments.alipay;

import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Callbacks.notifiedConcurrently;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.AlipaySimulator;
import dev.idem.testing.Db;
import dev.idem.testing.Ledger;
import dev.idem.testing.GatewaysOn;
import dev.idem.testing.Metrics;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Alipay's asynchronous notifications, signed RSA2 as Alipay does, against the real servers. */
@QuarkusTest
@TestProfile(GatewaysOn.class)
class AlipayNotifyTest {

    static final long AMOUNT = 1999;

    @Inject
    Db db;

    @Inject
    Ledger ledger;

    final String user = "alipay-" + UUID.randomUUID();
    final AlipaySimulator alipay = AlipaySimulator.configured();

    static void answered(Response answer, int status, String body) {
        answer.then().statusCode(status).contentType(startsWith("text/plain"));
        assertEquals(body, answer.asString());
    }

    static void success(Response answer) {
        answered(answer, 200, "success");
    }

    Response deliver(Map<String, String> parameters) {
        return AlipaySimulator.deliver(alipay.sign(parameters));
    }

    @Test
    void aValidNotificationPaysTheOrderAndGrantsItsCoupon() {
        String order = newOrder(user, AMOUNT);
        Map<String, String> notification = alipay.notification(order, "2026" + order, "TRADE_SUCCESS", "19.99");

        success(deliver(notification));

        assertEquals("PAID", ledger.status(order));
        assertEquals("2026" + order, db.string("SELECT trade_no FROM orders WHERE id = $1", order));
        LocalDateTime gmtPayment = LocalDateTime.parse(notification.get("gmt_payment"),
                DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss"));
        assertEquals(1, db.count("SELECT count(*) FROM orders WHERE id = $1 AND paid_at = $2", order,
                gmtPayment.atZone(ZoneId.of("Asia/Shanghai")).toOffsetDateTime().withOffsetSameInstant(ZoneOffset.UTC)));
        Topics.awaitCoupon(db, "paid:" + order);
    }

    @Test
    void sixConcurrentRetriesOfEachPaymentPayOnceAndGrantOnce() {
        List<String> orders = notifiedConcurrently(db, user, AMOUNT, 10, 6, order -> {
            String form = alipay.sign(alipay.notification(order, "2026" + order, "TRADE_SUCCESS", AMOUNT));
            return () -> AlipaySimulator.request(form);
        }, "success");

        for (String order : orders) {
            assertEquals("PAID", ledger.status(order));
            assertEquals(1, ledger.grants(order));
            assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE order_id = $1", order));
            assertEquals(1, ledger.dedupRecords("2026" + order));
            assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = $1", order));
        }
    }

    @Test
    void tradeFinishedAfterTradeSuccessIsTheSamePayment() {
        String order = newOrder(user, AMOUNT);
        success(deliver(alipay.notification(order, "2026" + order, "TRADE_SUCCESS", AMOUNT)));

        success(deliver(alipay.notification(order, "2026" + order, "TRADE_FINISHED", AMOUNT)));

        assertEquals("PAID", ledger.status(order));
        assertEquals(1, ledger.dedupRecords("2026" + order));
        assertEquals(1, ledger.grants(order));
        assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = $1", order));
    }

    @Test
    void forgedOrMalformedNotificationsAreRefusedAndChangeNothing() {
        String order = newOrder(user, AMOUNT);
        String trade = "2026" + order;
        Map<String, String> notification = alipay.notification(order, trade, "TRADE_SUCCESS", AMOUNT);
        String form = alipay.sign(notification);
        Metrics before = Metrics.scrape();

        // tampered after signing: the amount, or a parameter added
        answered(AlipaySimulator.deliver(form.replace("total_amount=19.99", "total_amount=0.01")), 400, "failure");
        answered(AlipaySimulator.deliver(form + "&passback_params=x"), 400, "failure");
        // signed with a key that is not Alipay's
        answered(AlipaySimulator.deliver(AlipaySimulator.generated().sign(notification)), 400, "failure");
        // no signature, or another signature type
        answered(AlipaySimulator.deliver(AlipaySimulator.form(notification)), 400, "failure");
        answered(AlipaySimulator.deliver(form.replace("sign_type=RSA2", "sign_type=RSA")), 400, "failure");
        // signed by Alipay, for another application
        answered(AlipaySimulator.deliver(alipay.withAppId("2021000000000002")
                .sign(alipay.withAppId("2021000000000002").notification(order, trade, "TRADE_SUCCESS", AMOUNT))),
                400, "failure");
        // signed, but amounts that are not yuan with two decimals
        for (String amount : List.of("19.990", "-19.99", "+19.99", "1.999e1", "19,99", "", "abc")) {
            answered(deliver(alipay.notification(order, trade, "TRADE_SUCCESS", amount)), 400, "failure");
        }
        // signed, but an unknown status, a missing trade number, a malformed payment time
        answered(deliver(alipay.notification(order, trade, "TRADE_PAID", AMOUNT)), 400, "failure");
        Map<String, String> noTrade = alipay.notification(order, trade, "TRADE_SUCCESS", AMOUNT);
        noTrade.remove("trade_no");
        answered(deliver(noTrade), 400, "failure");
        Map<String, String> badTime = alipay.notification(order, trade, "TRADE_SUCCESS", AMOUNT);
        badTime.put("gmt_payment", "2026-02-30 10:00:00");
        answered(deliver(badTime), 400, "failure");
        // not a form: a parameter twice, a broken escape
        answered(AlipaySimulator.deliver(form + "&trade_no=other"), 400, "failure");
        answered(AlipaySimulator.deliver(form + "&x=%zz"), 400, "failure");

        Metrics after = Metrics.scrape();
        assertEquals(6, after.notices(before, "alipay", "unauthentic"));
        assertEquals(12, after.notices(before, "alipay", "unreadable"));
        assertEquals("WAIT_PAY", ledger.status(order));
        assertEquals(0, ledger.dedupRecords(trade));
        assertEquals(0, ledger.grants(order));
    }

    @Test
    void waitBuyerPayIsAcknowledgedAndIgnored() {
        String order = newOrder(user, AMOUNT);

        success(deliver(alipay.notification(order, "2026" + order, "WAIT_BUYER_PAY", AMOUNT)));

        assertEquals("WAIT_PAY", ledger.status(order));
        assertEquals(0, ledger.dedupRecords("2026" + order));
    }

    @Test
    void tradeClosedClosesTheOrder() {
        String order = newOrder(user, AMOUNT);

        success(deliver(alipay.notification(order, "2026" + order, "TRADE_CLOSED", AMOUNT)));

        assertEquals("CLOSED", ledger.status(order));
    }

    @Test
    void anAmountMismatchIsRecordedAsAnAnomalyAndAcknowledged() {
        String order = newOrder(user, AMOUNT);

        success(deliver(alipay.notification(order, "2026" + order, "TRADE_SUCCESS", "19.98")));

        assertEquals("WAIT_PAY", ledger.status(order));
        assertEquals(1, ledger.anomalies(order, "AMOUNT_MISMATCH"));
        assertEquals(0, ledger.grants(order));
    }

    @Test
    void aSecondTradeForAPaidOrderIsADoublePayment() {
        String order = newOrder(user, AMOUNT);
        success(deliver(alipay.notification(order, "2026-first-" + order, "TRADE_SUCCESS", AMOUNT)));

        success(deliver(alipay.notification(order, "2026-second-" + order, "TRADE_SUCCESS", AMOUNT)));

        assertEquals("PAID", ledger.status(order));
        assertEquals("2026-first-" + order, db.string("SELECT trade_no FROM orders WHERE id = $1", order));
        assertEquals(1, ledger.anomalies(order, "DOUBLE_PAYMENT"));
        assertEquals(1, ledger.grants(order));
    }

    @Test
    void anUnknownOrderIsAnsweredSoThatAlipayRetries() {
        String order = "no-such-order-" + UUID.randomUUID();

        answered(deliver(alipay.notification(order, "2026" + order, "TRADE_SUCCESS", AMOUNT)), 404, "failure");

        assertEquals(0, ledger.dedupRecords("2026" + order));
    }
}
