package dev.idem.payments;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testing.AlipaySimulator;
import dev.idem.testing.Callbacks;
import dev.idem.testing.Db;
import dev.idem.testing.GatewayApi;
import dev.idem.testing.GatewayQueriesOn;
import dev.idem.payments.query.PaymentQueries;
import dev.idem.testing.Zipkin;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.awaitility.Awaitility;
import org.jboss.logmanager.ExtLogRecord;
import org.junit.jupiter.api.Test;

/**
 * What idem asks of a gateway is traced too: a payment that only a query found is in the query's
 * trace down to its coupon, and one that only a bill listed is in the import's trace, under the
 * operator's request that imported it.
 */
@QuarkusTest
@TestProfile(GatewayTracesTest.QueriedToZipkin.class)
class GatewayTracesTest {

    static final long AMOUNT = 1999;

    /** WeChat Pay's orders queried, Alipay's found only by its bill; spans exported to Zipkin. */
    public static class QueriedToZipkin extends GatewayQueriesOn {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> config = new HashMap<>(super.getConfigOverrides());
            config.put("idem.gateways.alipay.query.enabled", "false");
            config.put("idem.tracing.zipkin-endpoint", Zipkin.SPANS);
            return config;
        }
    }

    @Inject
    Pool pool;

    @Test
    void aPaymentFoundByTheQueryIsInTheQuerysTraceDownToItsCoupon() {
        String order = Callbacks.newOrder("traced-query-" + UUID.randomUUID(), AMOUNT, "wechatpay");
        String tradeNo = "4200" + order.replace("-", "");
        Map<String, String> loggedIn = new ConcurrentHashMap<>();
        Handler lines = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record instanceof ExtLogRecord line && line.getFormattedMessage().contains(order)) {
                    loggedIn.put("traceId", String.valueOf(line.getMdc("traceId")));
                    loggedIn.put("spanId", String.valueOf(line.getMdc("spanId")));
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger queries = Logger.getLogger(PaymentQueries.class.getName());
        queries.addHandler(lines);
        try {
            GatewayQueriesOn.Apis.wechatpay().payWithoutNotifying(order, tradeNo, AMOUNT);
            awaitPaid(order);
        } finally {
            queries.removeHandler(lines);
        }

        String traceId = appliedIn(tradeNo);
        JsonObject query = Zipkin.span(traceId, "idem gateway query", 1);
        // "Order … was paid at wechatpay …: applied from the query", written in the query's span
        assertEquals(traceId, loggedIn.get("traceId"), "the query's log line names its trace");
        assertTrue(Zipkin.trace(traceId).stream().map(JsonObject.class::cast)
                .anyMatch(span -> span.getString("id").equals(loggedIn.get("spanId"))), "and a span of it");
        Map<String, Object> tags = query.getJsonObject("tags").getMap();
        assertEquals("wechatpay", tags.get("idem.gateway"));
        assertEquals("paid", tags.get("idem.query.result"));
        JsonObject payment = Zipkin.span(traceId, "idem payment-callback", 1);
        assertEquals("processed", payment.getJsonObject("tags").getString("idem.outcome"));
        JsonObject grant = Zipkin.span(traceId, "idem coupon-grant", 1);
        JsonArray trace = Zipkin.trace(traceId);
        assertTrue(Zipkin.descends(trace, payment, query), "the payment's span descends from the query's: " + trace);
        assertTrue(Zipkin.descends(trace, grant, payment), "the coupon's span descends from the payment's: " + trace);
        // the query's own HTTP span names the order (WeChat Pay's path does); never the payment's key
        assertTrue(!trace.encode().contains(tradeNo), "the trade number in " + trace);
    }

    @Test
    void aPaymentOnlyTheBillListedIsInTheImportsTraceUnderTheOperatorsRequest() {
        String order = Callbacks.newOrder("traced-bill-" + UUID.randomUUID(), AMOUNT, "alipay");
        String tradeNo = "2026" + order.replace("-", "");
        AlipaySimulator.Api alipay = GatewayQueriesOn.Apis.alipay();
        alipay.payWithoutNotifying(order, tradeNo, AMOUNT);

        String traceId = Zipkin.newTraceId();
        given().header("X-Admin-Token", "test-admin-token").header("traceparent", Zipkin.traceparent(traceId))
                .post("/admin/reconciliation/gateways/alipay/bills?date=" + GatewayApi.today())
                .then().statusCode(200);
        assertEquals("PAID", new Db(pool).string("SELECT status FROM orders WHERE id = $1", order));

        JsonObject imported = Zipkin.span(traceId, "idem bill import", 1);
        assertEquals("alipay", imported.getJsonObject("tags").getString("idem.gateway"));
        JsonObject payment = Zipkin.span(traceId, "idem payment-callback", 1);
        assertTrue(Zipkin.descends(Zipkin.trace(traceId), payment, imported), "the payment's span descends from the import's");
        assertEquals(traceId, appliedIn(tradeNo), "the key's trail names the import's trace");
    }

    private void awaitPaid(String order) {
        Db db = new Db(pool);
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> "PAID".equals(db.string("SELECT status FROM orders WHERE id = $1", order)));
    }

    /** The trace that applied the payment, as the key's trail names it. */
    private static String appliedIn(String tradeNo) {
        return given().header("X-Admin-Token", "test-admin-token")
                .get("/admin/dedup/" + PaymentService.SCOPE + "/" + tradeNo + ":SUCCESS")
                .then().statusCode(200).extract().jsonPath().getString("record.traceId");
    }
}
