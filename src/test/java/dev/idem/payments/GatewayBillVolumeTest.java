package dev.idem.payments;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.Db;
import dev.idem.testing.GatewayApi;
import dev.idem.testing.GatewayApi.BillLine;
import dev.idem.testing.GatewayBillsOn;
import dev.idem.testing.TestKeys;
import dev.idem.testing.WeChatPaySimulator;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.config.HttpClientConfig;
import io.restassured.config.RestAssuredConfig;
import io.restassured.path.json.JsonPath;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A large bill, every line a payment missing here: each is applied exactly once, and the same bill
 * imported again applies nothing. Prints the lines per second of both imports. The size is
 * {@code -DbillVolume} (100000 for the figure in docs/PERFORMANCE.md; small by default, so
 * that the suite stays quick).
 */
@QuarkusTest
@TestProfile(GatewayBillsOn.class)
class GatewayBillVolumeTest {

    static final int LINES = Integer.getInteger("billVolume", 2000);

    @Inject
    Pool pool;

    @Test
    void everyLineOfALargeBillIsAppliedOnceAndAgainNothing() {
        Db db = new Db(pool);
        String run = UUID.randomUUID().toString().substring(0, 8);
        LocalDate day = LocalDate.of(2026, 10, 1);
        Instant at = day.atTime(12, 0).atZone(GatewayApi.GATEWAY_TIME).toInstant();
        db.count("""
                WITH made AS (
                    INSERT INTO orders (id, user_id, amount_cents, currency, status, created_at, gateway)
                    SELECT 'vol-' || $1 || '-' || g, 'vol-user', 1999, 'CNY', 'WAIT_PAY', now(), 'wechatpay'
                    FROM generate_series(1, $2) g RETURNING 1)
                SELECT count(*) FROM made""", run, LINES);
        List<BillLine> lines = new ArrayList<>(LINES);
        for (int i = 1; i <= LINES; i++) {
            lines.add(BillLine.payment("vol-" + run + "-" + i, "4200vol" + run + i, 1999, at.plusMillis(i)));
        }
        byte[] csv = WeChatPaySimulator.tradeBill(lines);
        String hash = "SHA1=" + TestKeys.sha1Hex(csv);

        long start = System.nanoTime();
        JsonPath first = importBill(day, csv, hash);
        double firstSeconds = (System.nanoTime() - start) / 1e9;
        assertEquals(LINES, first.getInt("lines"));
        assertEquals(LINES, first.getInt("applied"));
        assertEquals(LINES, first.getInt("findings.paidThereNotHere.count"));
        assertEquals(LINES, db.count("SELECT count(*) FROM orders WHERE id LIKE $1 AND status = 'PAID'", "vol-" + run + "-%"));
        assertEquals(LINES, db.count("SELECT count(*) FROM outbox_event WHERE event_key LIKE $1", "paid:vol-" + run + "-%"));

        start = System.nanoTime();
        JsonPath again = importBill(day, csv, hash);
        double againSeconds = (System.nanoTime() - start) / 1e9;
        assertEquals(0, again.getInt("applied"));
        assertEquals(LINES, again.getInt("duplicates"));
        assertEquals(LINES, db.count("SELECT count(*) FROM outbox_event WHERE event_key LIKE $1", "paid:vol-" + run + "-%"));
        System.out.printf("bill import, %d lines (%.1f MB): first %.1f s, %.0f lines/s; again %.1f s, %.0f lines/s%n",
                LINES, csv.length / 1e6, firstSeconds, LINES / firstSeconds, againSeconds, LINES / againSeconds);
    }

    static JsonPath importBill(LocalDate day, byte[] csv, String hash) {
        // a large bill takes longer than the tests' usual read timeout
        RestAssuredConfig patient = RestAssured.config().httpClient(HttpClientConfig.httpClientConfig()
                .setParam("http.socket.timeout", 600_000).setParam("http.connection.timeout", 10_000));
        return given().config(patient).header("X-Admin-Token", "test-admin-token").header("X-Bill-Hash", hash).contentType("text/csv")
                .body(csv).post("/admin/reconciliation/gateways/wechatpay/bills?date=" + day)
                .then().statusCode(200).extract().jsonPath();
    }
}
