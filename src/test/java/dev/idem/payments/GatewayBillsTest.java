package dev.idem.payments;

import static dev.idem.pipeline.SqlTime.ts;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testing.AlipaySimulator;
import dev.idem.testing.Callbacks;
import dev.idem.testing.Db;
import dev.idem.testing.Gateway;
import dev.idem.testing.GatewayApi;
import dev.idem.testing.GatewayApi.BillLine;
import dev.idem.testing.GatewayBillsOn;
import dev.idem.testing.GatewayQueriesOn;
import dev.idem.testing.Http;
import dev.idem.testing.Ledger;
import dev.idem.testing.TestKeys;
import dev.idem.testing.WeChatPaySimulator;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The gateways' daily bills against their simulators: a payment whose notification never came is
 * applied once from the bill, lines that differ or are missing are findings, a bill imported again
 * changes nothing, and a bill whose hash or signature does not match is refused with nothing applied.
 */
@QuarkusTest
@TestProfile(GatewayBillsOn.class)
class GatewayBillsTest {

    static final long AMOUNT = 1999;
    static final String ADMIN = "test-admin-token";

    @Inject
    Db db;

    @Inject
    Ledger ledger;

    final String user = "bills-" + UUID.randomUUID();
    final WeChatPaySimulator.Api wechatpay = GatewayQueriesOn.Apis.wechatpay();
    final AlipaySimulator.Api alipay = GatewayQueriesOn.Apis.alipay();

    @BeforeEach
    void untamperedBills() {
        wechatpay.tamperBills(false);
        alipay.tamperBills(false);
    }

    static RequestSpecification admin() {
        return given().header("X-Admin-Token", ADMIN);
    }

    String order(String gateway) {
        return Callbacks.newOrder(user, AMOUNT, gateway);
    }

    static String trade(String prefix, String orderId) {
        return prefix + orderId.replace("-", "");
    }

    /** What a payment left behind: its key's records, grants and coupons, and anomalies of the order. */
    String trail(String orderId, String tradeNo) {
        return db.count("SELECT count(*) FROM dedup_record WHERE scope = $1 AND key = $2", PaymentService.SCOPE,
                tradeNo + ":SUCCESS") + " records, "
                + db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1", "paid:" + orderId) + " grants, "
                + db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = $1", orderId) + " anomalies";
    }

    static void send(java.util.function.Supplier<java.net.http.HttpRequest> notification) {
        Http.Answer answer = new Http().all(List.of(notification), 1, null).get(0);
        assertEquals(200, answer.status(), answer.body());
    }

    JsonPath importFetched(String gateway, LocalDate date, int status) {
        return admin().post("/admin/reconciliation/gateways/" + gateway + "/bills?date=" + date)
                .then().statusCode(status).extract().jsonPath();
    }

    /**
     * The orders paid here through {@code gateway} on {@code day} that {@code lines} do not list: what
     * {@code paidHereNotThere} must count. Other tests of the day pay such orders too, so the
     * report's samples need not hold this test's.
     */
    long paidHereNotInBill(String gateway, LocalDate day, List<BillLine> lines) {
        String[] listed = lines.stream().filter(line -> !line.refund()).map(BillLine::orderId).toArray(String[]::new);
        return db.count("""
                SELECT count(*) FROM orders WHERE status = 'PAID' AND gateway = $1 AND paid_at >= $2 AND paid_at < $3
                AND id <> ALL($4)""", gateway, ts(day.atStartOfDay(GatewayApi.GATEWAY_TIME).toInstant()),
                ts(day.plusDays(1).atStartOfDay(GatewayApi.GATEWAY_TIME).toInstant()), listed);
    }

    static List<String> sampled(JsonPath report, String finding) {
        return report.getList("findings." + finding + ".samples.orderId");
    }

    /**
     * WeChat Pay's bill for today, fetched: the tampered file is refused and nothing is applied;
     * the real one applies the payment whose notification was lost (once), finds the order paid
     * here that the bill does not list and the line whose amount differs, lists the refund, and
     * takes the repeated line as a duplicate. Imported again, it applies nothing, and the lost
     * notification, delivered late, is a duplicate too.
     */
    @Test
    void wechatPaysFetchedBillRepairsTheLostPaymentOnceAndReportsWhatDiffers() {
        LocalDate today = GatewayApi.today();
        String notified = order("wechatpay");
        String lost = order("wechatpay");
        String differs = order("wechatpay");
        String hereOnly = order("wechatpay");
        send(wechatpay.pay(notified, trade("4200", notified), AMOUNT).orElseThrow());
        wechatpay.payWithoutNotifying(lost, trade("4200", lost), AMOUNT);
        wechatpay.payWithoutNotifying(differs, trade("4200", differs), AMOUNT);
        wechatpay.billAmount(differs, AMOUNT + 100);
        wechatpay.addBillLine(today, BillLine.payment(notified, trade("4200", notified), AMOUNT, Instant.now()));
        wechatpay.addBillLine(today, new BillLine(true, notified, trade("4200", notified), 500, Instant.now(), "50300" + notified.hashCode()));
        String hereOnlyCallback = new JsonObject().put("tradeNo", "hmac-" + hereOnly).put("orderId", hereOnly)
                .put("amountCents", AMOUNT).put("status", "SUCCESS").put("paidAt", Instant.now().toString()).encode();
        Http.Answer paidHere = new Http().all(List.of(() -> Gateway.signed(Http.post("/api/payments/callback",
                hereOnlyCallback), Gateway.SECRET, hereOnlyCallback)), 1, null).get(0);
        assertEquals(200, paidHere.status(), paidHere.body());
        int lines = wechatpay.billLines(today).size();

        wechatpay.tamperBills(true);
        JsonPath refused = importFetched("wechatpay", today, 400);
        assertEquals("BILL_INVALID", refused.getString("code"));
        assertTrue(refused.getString("detail").contains("SHA1"), refused.prettify());
        assertEquals("WAIT_PAY", ledger.status(lost));
        assertEquals("0 records, 0 grants, 0 anomalies", trail(lost, trade("4200", lost)));
        assertEquals("0 records, 0 grants, 0 anomalies", trail(differs, trade("4200", differs)));
        wechatpay.tamperBills(false);

        JsonPath report = importFetched("wechatpay", today, 200);
        assertEquals("wechatpay", report.getString("gateway"));
        assertEquals(today.toString(), report.getString("date"));
        assertEquals(lines, report.getInt("lines"));
        assertEquals("PAID", ledger.status(lost));
        assertEquals(trade("4200", lost), db.string("SELECT trade_no FROM orders WHERE id = $1", lost));
        assertEquals("1 records, 1 grants, 0 anomalies", trail(lost, trade("4200", lost)));
        assertEquals("1 records, 1 grants, 0 anomalies", trail(notified, trade("4200", notified)));
        assertEquals("WAIT_PAY", ledger.status(differs));
        assertTrue(sampled(report, "paidThereNotHere").contains(lost), report.prettify());
        assertTrue(report.getInt("applied") >= 1);
        assertTrue(sampled(report, "amountMismatch").contains(differs), report.prettify());
        assertEquals("PAID wechatpay", db.string("SELECT status || ' ' || gateway FROM orders WHERE id = $1", hereOnly));
        long hereNotThere = paidHereNotInBill("wechatpay", today, wechatpay.billLines(today));
        assertEquals(hereNotThere, report.getLong("findings.paidHereNotThere.count"), report.prettify());
        assertTrue(hereNotThere >= 1);
        assertTrue(sampled(report, "refunds").contains(notified), report.prettify());
        assertTrue(report.getInt("duplicates") >= 2, "the notified payment and its repeated line: " + report.prettify());
        assertTrue(!sampled(report, "paidThereNotHere").contains(notified), report.prettify());

        JsonPath again = importFetched("wechatpay", today, 200);
        assertEquals(0, again.getInt("applied"), again.prettify());
        assertEquals(0, again.getInt("findings.paidThereNotHere.count"), again.prettify());
        assertTrue(sampled(again, "amountMismatch").contains(differs), again.prettify());
        assertEquals(paidHereNotInBill("wechatpay", today, wechatpay.billLines(today)),
                again.getLong("findings.paidHereNotThere.count"), again.prettify());
        assertEquals("1 records, 1 grants, 0 anomalies", trail(lost, trade("4200", lost)));
        assertEquals(1, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = $1", differs));

        JsonPath kept = admin().get("/admin/reconciliation/gateways/wechatpay/bills/" + today)
                .then().statusCode(200).extract().jsonPath();
        assertEquals(again.getString("importedAt"), kept.getString("importedAt"));
        assertEquals(again.getInt("duplicates"), kept.getInt("duplicates"));

        send(wechatpay.lateNotification(lost));
        assertEquals("1 records, 1 grants, 0 anomalies", trail(lost, trade("4200", lost)));
    }

    /**
     * Alipay's bill for today, fetched: an answer whose sign is not Alipay's is refused with nothing
     * applied; the real zip applies the lost payment once and lists the refund; the same zip given
     * as a file applies nothing.
     */
    @Test
    void alipaysFetchedBillRepairsTheLostPaymentAndTheSameZipGivenAppliesNothing() {
        LocalDate today = GatewayApi.today();
        String notified = order("alipay");
        String lost = order("alipay");
        send(alipay.pay(notified, trade("2026", notified), AMOUNT).orElseThrow());
        alipay.payWithoutNotifying(lost, trade("2026", lost), AMOUNT);
        alipay.addBillLine(today, new BillLine(true, notified, trade("2026", notified), 300, Instant.now(), "RF" + notified.hashCode()));

        alipay.tamperBills(true);
        JsonPath refused = importFetched("alipay", today, 400);
        assertEquals("BILL_INVALID", refused.getString("code"));
        assertEquals("WAIT_PAY", ledger.status(lost));
        assertEquals("0 records, 0 grants, 0 anomalies", trail(lost, trade("2026", lost)));
        alipay.tamperBills(false);

        JsonPath report = importFetched("alipay", today, 200);
        assertEquals("PAID", ledger.status(lost));
        assertEquals("1 records, 1 grants, 0 anomalies", trail(lost, trade("2026", lost)));
        assertTrue(sampled(report, "paidThereNotHere").contains(lost), report.prettify());
        assertTrue(sampled(report, "refunds").contains(notified), report.prettify());
        assertEquals(0, report.getInt("findings.amountMismatch.count"), report.prettify());
        // orders of other tests and earlier runs, paid here today, are not in this simulator's bill; ours are
        assertEquals(paidHereNotInBill("alipay", today, alipay.billLines(today)),
                report.getLong("findings.paidHereNotThere.count"), report.prettify());

        byte[] zip = AlipaySimulator.tradeBill(today, alipay.billLines(today));
        JsonPath given = admin().contentType("application/zip").body(zip)
                .post("/admin/reconciliation/gateways/alipay/bills?date=" + today)
                .then().statusCode(200).extract().jsonPath();
        assertEquals("file", given.getString("source"));
        assertEquals(0, given.getInt("applied"), given.prettify());
        assertEquals(alipay.billLines(today).size(), given.getInt("lines"));
        assertEquals("1 records, 1 grants, 0 anomalies", trail(lost, trade("2026", lost)));
    }

    /**
     * WeChat Pay's CSV given as downloaded, for a past day: with its hash it applies the payment
     * (paid at the bill's time); with another hash, cut short, or with an amount of three decimals
     * it is refused and nothing of it is applied.
     */
    @Test
    void aWechatPayFileIsAppliedOnlyWhenItIsWholeAndItsHashMatches() {
        LocalDate day = LocalDate.of(2026, 11, 30);
        String first = order("wechatpay");
        String second = order("wechatpay");
        Instant at = day.atTime(10, 0).atZone(GatewayApi.GATEWAY_TIME).toInstant();
        byte[] csv = WeChatPaySimulator.tradeBill(List.of(
                BillLine.payment(first, trade("4200", first), AMOUNT, at),
                BillLine.payment(second, trade("4200", second), AMOUNT, at.plusSeconds(60))));
        String text = new String(csv, StandardCharsets.UTF_8);
        String cutShort = text.substring(0, text.indexOf("总交易单数"));
        String threeDecimals = text.replace("`19.99,`0.00,`", "`19.990,`0.00,`");

        for (var refused : List.of(
                new Object[] {csv, "SHA1=" + TestKeys.sha1Hex("another file".getBytes(StandardCharsets.UTF_8)), "SHA1"},
                new Object[] {cutShort.getBytes(StandardCharsets.UTF_8), null, "summary"},
                new Object[] {threeDecimals.getBytes(StandardCharsets.UTF_8), null, "does not read"},
                new Object[] {new byte[] {(byte) 0xff, (byte) 0xfe, 'x'}, null, "UTF-8"})) {
            RequestSpecification post = admin().contentType("text/csv").body((byte[]) refused[0]);
            if (refused[1] != null) {
                post = post.header("X-Bill-Hash", refused[1]);
            }
            JsonPath problem = post.post("/admin/reconciliation/gateways/wechatpay/bills?date=" + day)
                    .then().statusCode(400).contentType("application/problem+json").extract().jsonPath();
            assertEquals("BILL_INVALID", problem.getString("code"));
            assertTrue(problem.getString("detail").contains((String) refused[2]), problem.getString("detail"));
            assertEquals("WAIT_PAY", ledger.status(first));
            assertEquals("WAIT_PAY", ledger.status(second));
        }

        JsonPath report = admin().contentType("text/csv").header("X-Bill-Hash", "SHA1=" + TestKeys.sha1Hex(csv)).body(csv)
                .post("/admin/reconciliation/gateways/wechatpay/bills?date=" + day)
                .then().statusCode(200).extract().jsonPath();
        assertEquals(2, report.getInt("lines"));
        assertEquals(2, report.getInt("applied"));
        assertEquals(0, report.getInt("duplicates"));
        assertEquals("PAID", ledger.status(first));
        assertEquals(at.truncatedTo(ChronoUnit.SECONDS).toString(),
                db.string("SELECT to_char(paid_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM orders WHERE id = $1", first));
        assertEquals("wechatpay", db.string("SELECT gateway FROM orders WHERE id = $1", second));
    }

    /** What is not a bill import: an unknown gateway, a date that is not one, no token, a day never imported. */
    @Test
    void unknownGatewaysBadDatesAndMissingReportsAreProblems() {
        assertEquals("GATEWAY_NOT_FOUND", admin().post("/admin/reconciliation/gateways/paypal/bills?date=2026-12-01")
                .then().statusCode(404).extract().path("code"));
        assertEquals("BAD_REQUEST", admin().post("/admin/reconciliation/gateways/wechatpay/bills?date=2026-13-01")
                .then().statusCode(400).extract().path("code"));
        assertEquals("BAD_REQUEST", admin().post("/admin/reconciliation/gateways/alipay/bills")
                .then().statusCode(400).extract().path("code"));
        assertEquals("BILL_NOT_FOUND", admin().get("/admin/reconciliation/gateways/alipay/bills/1999-01-01")
                .then().statusCode(404).extract().path("code"));
        assertEquals("BILL_NOT_FOUND", importFetched("alipay", LocalDate.of(1999, 1, 1), 404).getString("code"));
        given().post("/admin/reconciliation/gateways/wechatpay/bills?date=2026-12-01").then().statusCode(401);
        assertEquals("BILL_INVALID", admin().contentType("application/zip").body("not a zip".getBytes(StandardCharsets.UTF_8))
                .post("/admin/reconciliation/gateways/alipay/bills?date=2026-12-01")
                .then().statusCode(400).extract().path("code"));
    }
}
