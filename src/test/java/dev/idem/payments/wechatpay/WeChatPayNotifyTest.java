package dev.idem.payments.wechatpay;

import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Callbacks.notifiedConcurrently;
import static org.hamcrest.Matchers.emptyString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.testing.Db;
import dev.idem.testing.Ledger;
import dev.idem.testing.GatewaysOn;
import dev.idem.testing.Metrics;
import dev.idem.testing.TestKeys;
import dev.idem.testing.Topics;
import dev.idem.testing.WeChatPaySimulator;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Inject;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** WeChat Pay API v3 notifications, signed and encrypted as WeChat Pay does, against the real servers. */
@QuarkusTest
@TestProfile(GatewaysOn.class)
class WeChatPayNotifyTest {

    static final long AMOUNT = 1999;

    @Inject
    Db db;

    @Inject
    Ledger ledger;

    final String user = "wechatpay-" + UUID.randomUUID();
    final WeChatPaySimulator wechat = WeChatPaySimulator.configured();

    static void recorded(Response answer) {
        answer.then().statusCode(200).body(emptyString());
    }

    /** WeChat Pay's failure shape: {"code":"FAIL","message":...}, and never a key. */
    static void failed(Response answer, int status) {
        answer.then().statusCode(status).contentType(startsWith("application/json"))
                .body("code", equalTo("FAIL")).body("message", not(emptyString()));
        String body = answer.asString();
        assertFalse(body.contains(WeChatPaySimulator.API_V3_KEY), body);
        assertFalse(body.contains("PUBLIC KEY"), body);
    }

    @Test
    void aValidNotificationPaysTheOrderAndGrantsItsCoupon() {
        String order = newOrder(user, AMOUNT);
        JsonObject transaction = WeChatPaySimulator.transaction(order, "4200" + order, "SUCCESS", AMOUNT);

        recorded(wechat.deliver(wechat.notification(transaction)));

        assertEquals("PAID", ledger.status(order));
        assertEquals("4200" + order, db.string("SELECT trade_no FROM orders WHERE id = $1", order));
        Instant paidAt = OffsetDateTime.parse(transaction.getString("success_time")).toInstant();
        assertEquals(1, db.count("SELECT count(*) FROM orders WHERE id = $1 AND paid_at = $2", order,
                paidAt.atOffset(java.time.ZoneOffset.UTC)));
        assertEquals(1, ledger.grants(order));
        Topics.awaitCoupon(db, "paid:" + order);
    }

    @Test
    void sixConcurrentRetriesOfEachPaymentPayOnceAndGrantOnce() {
        List<String> orders = notifiedConcurrently(db, user, AMOUNT, 10, 6, order -> {
            String body = wechat.notification(order, "4200" + order, "SUCCESS", AMOUNT);
            return () -> wechat.request(body);
        }, "");

        String[] ids = orders.toArray(String[]::new);
        assertEquals(orders.size(), db.count("SELECT count(*) FROM orders WHERE id = ANY($1) AND status = 'PAID' "
                + "AND trade_no = '4200' || id", (Object) ids));
        for (String order : orders) {
            assertEquals(1, ledger.grants(order));
            assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE order_id = $1", order));
            assertEquals(1, ledger.dedupRecords("4200" + order));
        }
        assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = ANY($1)", (Object) ids));
    }

    @Test
    void thePlatformsSecondKeyIsAcceptedDuringItsRotation() {
        String order = newOrder(user, AMOUNT);
        WeChatPaySimulator rotated = WeChatPaySimulator.secondKey();

        recorded(rotated.deliver(rotated.notification(order, "4200" + order, "SUCCESS", AMOUNT)));

        assertEquals("PAID", ledger.status(order));
    }

    @Test
    void forgedStaleOrUndecryptableNotificationsAreRefusedAndChangeNothing() {
        String order = newOrder(user, AMOUNT);
        String trade = "4200" + order;
        String body = wechat.notification(order, trade, "SUCCESS", AMOUNT);
        long now = Instant.now().getEpochSecond();
        Metrics before = Metrics.scrape();

        // tampered after signing
        WeChatPaySimulator.Headers signed = wechat.sign(body);
        failed(WeChatPaySimulator.deliver(body.replace("\"id\":\"", "\"id\":\"x"), signed), 401);
        // signed with a key that is not the platform's, under the platform's serial
        WeChatPaySimulator forger = wechat.withPlatformKey(TestKeys.generate().getPrivate());
        failed(forger.deliver(body), 401);
        // a serial no key is configured for
        failed(wechat.withSerial("UNKNOWN0000000000000000000000000000000").deliver(body), 401);
        // outside the timestamp window, either way
        failed(WeChatPaySimulator.deliver(body, wechat.sign(body, now - 3600)), 401);
        failed(WeChatPaySimulator.deliver(body, wechat.sign(body, now + 3600)), 401);
        failed(WeChatPaySimulator.deliver(body, new WeChatPaySimulator.Headers(
                signed.serial(), signed.timestamp(), signed.nonce(), "")), 401);
        // the signature probe WeChat Pay sends to check that merchants verify
        failed(WeChatPaySimulator.deliver(body, new WeChatPaySimulator.Headers(
                signed.serial(), signed.timestamp(), signed.nonce(), "WECHATPAY/SIGNTEST/" + signed.signature())), 401);

        // authentic, but the resource does not open: another APIv3 key (the tag fails), a flipped
        // byte, the tag alone, less than a tag, a mangled base64, other associated data, an
        // unknown algorithm
        failed(wechat.deliver(wechat.withApiV3Key("0123456789abcdef0123456789abcdef")
                .notification(order, trade, "SUCCESS", AMOUNT)), 400);
        JsonObject resource = new JsonObject(body).getJsonObject("resource");
        byte[] sealed = Base64.getDecoder().decode(resource.getString("ciphertext"));
        sealed[3] ^= 1;
        failed(wechat.deliver(WeChatPaySimulator.envelope(
                resource.copy().put("ciphertext", Base64.getEncoder().encodeToString(sealed)), "SUCCESS")), 400);
        byte[] tag = java.util.Arrays.copyOfRange(sealed, sealed.length - 16, sealed.length);
        failed(wechat.deliver(WeChatPaySimulator.envelope(
                resource.copy().put("ciphertext", Base64.getEncoder().encodeToString(tag)), "SUCCESS")), 400);
        failed(wechat.deliver(WeChatPaySimulator.envelope(
                resource.copy().put("ciphertext", Base64.getEncoder().encodeToString(new byte[] {1, 2, 3})), "SUCCESS")),
                400);
        failed(wechat.deliver(WeChatPaySimulator.envelope(
                resource.copy().put("ciphertext", "not base64!"), "SUCCESS")), 400);
        failed(wechat.deliver(WeChatPaySimulator.envelope(
                resource.copy().put("associated_data", "certificate"), "SUCCESS")), 400);
        failed(wechat.deliver(WeChatPaySimulator.envelope(
                resource.copy().put("algorithm", "AEAD_AES_128_GCM"), "SUCCESS")), 400);
        // authentic, but not a notification
        failed(wechat.deliver("not json"), 400);
        failed(wechat.deliver("{\"id\":\"1\",\"id\":\"2\"}"), 400);
        failed(wechat.deliver(wechat.notification(WeChatPaySimulator.transaction(order, trade, "SUCCESS", AMOUNT)
                .put("amount", new JsonObject().put("total", "1999")))), 400);

        Metrics after = Metrics.scrape();
        assertEquals(7, after.notices(before, "wechatpay", "unauthentic"));
        assertEquals(10, after.notices(before, "wechatpay", "unreadable"));
        assertEquals("WAIT_PAY", ledger.status(order));
        assertEquals(0, ledger.dedupRecords(trade));
        assertEquals(0, ledger.grants(order));
    }

    @Test
    void statesOtherThanSuccessAndClosedAreAcknowledgedAndIgnored() {
        String order = newOrder(user, AMOUNT);

        for (String state : List.of("NOTPAY", "USERPAYING", "PAYERROR", "REFUND")) {
            recorded(wechat.deliver(wechat.notification(order, "4200" + order, state, AMOUNT)));
        }

        assertEquals("WAIT_PAY", ledger.status(order));
        assertEquals(0, ledger.dedupRecords("4200" + order));
    }

    @Test
    void closedClosesTheOrder() {
        String order = newOrder(user, AMOUNT);

        recorded(wechat.deliver(wechat.notification(order, "4200" + order, "CLOSED", AMOUNT)));
        recorded(wechat.deliver(wechat.notification(order, "4200" + order, "CLOSED", AMOUNT)));

        assertEquals("CLOSED", ledger.status(order));
        assertEquals(0, ledger.grants(order));
    }

    @Test
    void anAmountMismatchIsRecordedAsAnAnomalyAndAcknowledged() {
        String order = newOrder(user, AMOUNT);

        recorded(wechat.deliver(wechat.notification(order, "4200" + order, "SUCCESS", 999)));
        recorded(wechat.deliver(wechat.notification(order, "4200" + order, "SUCCESS", 999)));

        assertEquals("WAIT_PAY", ledger.status(order));
        assertEquals(1, ledger.anomalies(order, "AMOUNT_MISMATCH"));
        assertEquals(0, ledger.grants(order));
    }

    @Test
    void aSecondTransactionForAPaidOrderIsADoublePayment() {
        String order = newOrder(user, AMOUNT);
        recorded(wechat.deliver(wechat.notification(order, "4200-first-" + order, "SUCCESS", AMOUNT)));

        recorded(wechat.deliver(wechat.notification(order, "4200-second-" + order, "SUCCESS", AMOUNT)));

        assertEquals("PAID", ledger.status(order));
        assertEquals("4200-first-" + order, db.string("SELECT trade_no FROM orders WHERE id = $1", order));
        assertEquals(1, ledger.anomalies(order, "DOUBLE_PAYMENT"));
        assertEquals(1, ledger.grants(order));
    }

    @Test
    void anUnknownOrderIsAnsweredSoThatWeChatPayRetries() {
        String order = "no-such-order-" + UUID.randomUUID();

        failed(wechat.deliver(wechat.notification(order, "4200" + order, "SUCCESS", AMOUNT)), 404);

        assertEquals(0, ledger.dedupRecords("4200" + order));
    }
}
