package dev.idem.payments;

import static dev.idem.pipeline.SqlTime.ts;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.orders.OrderRepository;
import dev.idem.orders.OrderRepository.QueryClaim;
import dev.idem.orders.PaymentGateway;
import dev.idem.testing.AlipaySimulator;
import dev.idem.testing.Callbacks;
import dev.idem.testing.Db;
import dev.idem.testing.Gateway;
import dev.idem.testing.GatewayApi;
import dev.idem.testing.GatewayQueriesOn;
import dev.idem.testing.Http;
import dev.idem.testing.Ledger;
import dev.idem.testing.Metrics;
import dev.idem.testing.WeChatPaySimulator;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The active query against the gateways' simulators: a payment whose notification was dropped is
 * found by asking, applied once through the same pipeline as a notification, and a notification
 * that comes after the query is a duplicate. Forged answers change nothing; every answer is
 * counted; two claimers never take one order.
 */
@QuarkusTest
@TestProfile(GatewayQueriesOn.class)
class GatewayQueryTest {

    static final long AMOUNT = 1999;
    static final String QUERIES = "idem_gateway_queries_total";

    @Inject
    Db db;

    @Inject
    Ledger ledger;

    @Inject
    Pool pool;

    @Inject
    OrderRepository orders;

    final String user = "query-" + UUID.randomUUID();
    final WeChatPaySimulator.Api wechatpay = GatewayQueriesOn.Apis.wechatpay();
    final AlipaySimulator.Api alipay = GatewayQueriesOn.Apis.alipay();

    @BeforeEach
    void everyNotificationDelivered() {
        wechatpay.dropFirstNotifications(0);
        alipay.dropFirstNotifications(0);
    }

    static ConditionFactory await() {
        return Awaitility.await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200));
    }

    /** A new order of the test's user; {@code gateway} null: it names none. */
    String order(String gateway) {
        return Callbacks.newOrder(user, AMOUNT, gateway);
    }

    static String tradeNo(GatewayApi api, String orderId) {
        return (api instanceof AlipaySimulator.Api ? "2026" : "4200") + orderId;
    }

    static Map<String, String> result(PaymentGateway gateway, String result) {
        return Map.of("gateway", gateway.id(), "result", result);
    }

    /**
     * The storm: 200 orders (a third for each gateway, a third naming none and paid with
     * WeChat Pay), every one paid at its gateway, one first notification in ten dropped and never
     * retried. After the query's delay every order is PAID exactly once with one coupon, the
     * reconciliation finds nothing, and the dropped notifications, delivered late, are duplicates.
     */
    @Test
    void everyPaymentWhoseNotificationWasDroppedIsFoundByTheQueryAndPaidOnce() {
        Instant since = Instant.now().minusSeconds(1);
        Metrics before = Metrics.scrape();
        int droppedBefore = wechatpay.dropped() + alipay.dropped();
        wechatpay.dropFirstNotifications(0.1);
        alipay.dropFirstNotifications(0.1);
        String[] gateways = {"wechatpay", "alipay", null};
        List<Supplier<HttpRequest>> submits = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            String body = Callbacks.orderBody(AMOUNT, gateways[i % 3]);
            String key = "query-storm-" + i;
            submits.add(() -> Http.post("/api/orders", body).header("X-User-Id", user).header("Idempotency-Key", key)
                    .build());
        }
        List<String> ids = new ArrayList<>();
        Map<String, GatewayApi> paidAt = new ConcurrentHashMap<>();
        for (Http.Answer answer : new Http().all(submits, 32, null)) {
            assertEquals(201, answer.status(), answer.body());
            JsonObject order = new JsonObject(answer.body());
            ids.add(order.getString("orderId"));
            paidAt.put(order.getString("orderId"), "alipay".equals(order.getString("gateway")) ? alipay : wechatpay);
        }

        List<Supplier<HttpRequest>> notifications = new ArrayList<>();
        List<String> dropped = new ArrayList<>();
        for (String id : ids) {
            GatewayApi api = paidAt.get(id);
            api.pay(id, tradeNo(api, id), AMOUNT).ifPresentOrElse(notifications::add, () -> dropped.add(id));
        }
        Collections.shuffle(notifications, new Random(46));
        for (Http.Answer answer : new Http().all(notifications, 32, null)) {
            assertEquals(200, answer.status(), answer.body());
            assertTrue(answer.body().isEmpty() || "success".equals(answer.body()), answer.body());
        }
        assertEquals(dropped.size(), wechatpay.dropped() + alipay.dropped() - droppedBefore);
        assertTrue(dropped.size() >= 10 && dropped.size() <= 35, "dropped " + dropped.size());

        String[] idArray = ids.toArray(String[]::new);
        String[] trades = ids.stream().map(id -> tradeNo(paidAt.get(id), id)).toArray(String[]::new);
        await().until(() -> db.count("SELECT count(*) FROM orders WHERE id = ANY($1) AND status = 'PAID'",
                (Object) idArray) == ids.size());
        Metrics paid = Metrics.scrape();

        assertPaidOnceWithOneCoupon(idArray, trades);
        long foundByQuery = paid.delta(before, QUERIES, Map.of("result", "paid"));
        assertTrue(foundByQuery >= dropped.size(), "paid answers " + foundByQuery + ", dropped " + dropped.size());
        assertEquals(0, paid.delta(before, QUERIES, Map.of("result", "error")));
        assertEquals(0, wechatpay.overlaps() + alipay.overlaps(), "queries of one order at once");
        assertEquals(0, wechatpay.refused() + alipay.refused(), "requests whose signature did not verify");
        assertReconciliationFindsNothing(since);

        // the notifications that were dropped come after all, late: each is a duplicate and changes nothing
        List<Supplier<HttpRequest>> late = new ArrayList<>();
        dropped.forEach(id -> late.add(paidAt.get(id).lateNotification(id)));
        for (Http.Answer answer : new Http().all(late, 16, null)) {
            assertEquals(200, answer.status(), answer.body());
            assertTrue(answer.body().isEmpty() || "success".equals(answer.body()), answer.body());
        }
        String first = dropped.get(0);
        String callback = Gateway.callback(tradeNo(paidAt.get(first), first), first, AMOUNT, "SUCCESS");
        Http.Answer hmac = new Http().all(List.of(() -> Gateway.signed(Http.post("/api/payments/callback", callback),
                Gateway.SECRET, callback)), 1, null).get(0);
        assertEquals(200, hmac.status(), hmac.body());
        assertEquals(true, new JsonObject(hmac.body()).getBoolean("duplicate"), hmac.body());
        Metrics after = Metrics.scrape();
        assertTrue(after.delta(paid, "idem_pipeline_outcomes_total",
                Map.of("scope", PaymentService.SCOPE, "outcome", "DUPLICATE")) >= dropped.size() + 1);
        assertPaidOnceWithOneCoupon(idArray, trades);
    }

    void assertPaidOnceWithOneCoupon(String[] ids, String[] trades) {
        int n = ids.length;
        assertEquals(n, db.count("""
                SELECT count(*) FROM orders o JOIN unnest($1::text[], $2::text[]) AS t(id, trade) ON o.id = t.id
                WHERE o.status = 'PAID' AND o.trade_no = t.trade""", ids, trades));
        String[] keys = Arrays.stream(trades).map(t -> t + ":SUCCESS").toArray(String[]::new);
        assertEquals(n, db.count("SELECT count(*) FROM dedup_record WHERE scope = $1 AND key = ANY($2) AND status = 'DONE'",
                PaymentService.SCOPE, keys));
        String[] sources = Arrays.stream(ids).map(id -> "paid:" + id).toArray(String[]::new);
        assertEquals(n, db.count("SELECT count(*) FROM outbox_event WHERE topic = 'coupon-grants' AND event_key = ANY($1)",
                (Object) sources));
        await().until(() -> db.count("SELECT count(*) FROM coupons WHERE source_key = ANY($1)", (Object) sources) >= n);
        assertEquals(n, db.count("SELECT count(*) FROM coupons WHERE source_key = ANY($1)", (Object) sources));
        assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = ANY($1)", (Object) ids));
    }

    static void assertReconciliationFindsNothing(Instant since) {
        JsonPath report = given().header("X-Admin-Token", "test-admin-token").get("/admin/reconciliation?since=" + since)
                .then().statusCode(200).extract().jsonPath();
        for (String check : new String[] {"paidOrdersWithoutCoupon", "couponsWithoutPaidOrder", "ordersWithSeveralCoupons",
                "hangingDedupRecords", "failedDedupRecords", "unresolvedAnomalies", "staleOutboxEvents"}) {
            assertEquals(0, report.getInt("checks." + check + ".count"), check + ": " + report.prettify());
        }
    }

    /**
     * An answer signed with a key the service does not know says "paid" in vain: nothing is
     * recorded, it is counted as an error, and the order is asked again; once the gateway answers
     * in its own name, the payment is applied.
     */
    @Test
    void aPaidAnswerWithABadSignatureChangesNothingAndCountsAnError() {
        Metrics before = Metrics.scrape();
        String byWechat = order("wechatpay");
        String byAlipay = order("alipay");
        for (var paid : List.of(Map.entry(byWechat, (GatewayApi) wechatpay), Map.entry(byAlipay, (GatewayApi) alipay))) {
            paid.getValue().forge(paid.getKey());
            paid.getValue().payWithoutNotifying(paid.getKey(), tradeNo(paid.getValue(), paid.getKey()), AMOUNT);
        }

        await().until(() -> {
            Metrics now = Metrics.scrape();
            return now.delta(before, QUERIES, result(PaymentGateway.WECHATPAY, "error")) >= 2
                    && now.delta(before, QUERIES, result(PaymentGateway.ALIPAY, "error")) >= 2;
        });
        for (String id : List.of(byWechat, byAlipay)) {
            assertEquals("WAIT_PAY", ledger.status(id));
            assertEquals(0, db.count("SELECT count(*) FROM dedup_record WHERE scope = $1 AND key LIKE $2",
                    PaymentService.SCOPE, "%" + id + ":SUCCESS"));
        }
        assertTrue(wechatpay.queries(byWechat) >= 2 && alipay.queries(byAlipay) >= 2);
        assertEquals(0, Metrics.scrape().delta(before, QUERIES, Map.of("result", "paid")));

        wechatpay.unforge(byWechat);
        alipay.unforge(byAlipay);
        await().until(() -> "PAID".equals(ledger.status(byWechat)) && "PAID".equals(ledger.status(byAlipay)));
        assertEquals(tradeNo(wechatpay, byWechat), db.string("SELECT trade_no FROM orders WHERE id = $1", byWechat));
        assertEquals(tradeNo(alipay, byAlipay), db.string("SELECT trade_no FROM orders WHERE id = $1", byAlipay));
    }

    /**
     * Unpaid, closed and unknown orders are counted by what their gateway said and change nothing.
     * A closed order leaves the schedule after its one query; the others are asked again.
     */
    @Test
    void unpaidClosedAndUnknownOrdersAreCountedAndStayWaiting() {
        Metrics before = Metrics.scrape();
        Map<GatewayApi, List<String>> byGateway = new LinkedHashMap<>();
        for (GatewayApi api : List.of(wechatpay, alipay)) {
            String gateway = api == wechatpay ? "wechatpay" : "alipay";
            String unpaid = order(gateway);
            String closed = order(gateway);
            String unknown = order(gateway);
            api.open(unpaid, AMOUNT);
            api.close(closed, AMOUNT);
            byGateway.put(api, List.of(unpaid, closed, unknown));
        }

        await().until(() -> {
            Metrics now = Metrics.scrape();
            for (PaymentGateway gateway : PaymentGateway.values()) {
                if (now.delta(before, QUERIES, result(gateway, "unpaid")) < 2
                        || now.delta(before, QUERIES, result(gateway, "closed")) < 1
                        || now.delta(before, QUERIES, result(gateway, "not_found")) < 2) {
                    return false;
                }
            }
            return true;
        });
        byGateway.forEach((api, ids) -> {
            String unpaid = ids.get(0);
            String closed = ids.get(1);
            String unknown = ids.get(2);
            ids.forEach(id -> assertEquals("WAIT_PAY", ledger.status(id), id));
            assertTrue(api.queries(unpaid) >= 2 && api.queries(unknown) >= 2);
            assertEquals(1, api.queries(closed));
            assertEquals(1, db.count("SELECT count(*) FROM orders WHERE id = $1 AND query_at IS NULL AND queries = 1",
                    closed));
            assertEquals(2, db.count("SELECT count(*) FROM orders WHERE id = ANY($1) AND query_at IS NOT NULL",
                    (Object) new String[] {unpaid, unknown}));
            // done here: closed at the gateway, they leave the schedule at their next query
            api.close(unpaid, AMOUNT);
            api.close(unknown, AMOUNT);
        });
        assertEquals(0, Metrics.scrape().delta(before, QUERIES, Map.of("result", "error")));
    }

    /**
     * Two instances never ask about one order at once: eight claimers on their own connections
     * claim the same due orders together, and each order is claimed exactly once, as the orders
     * table itself counts. The orders are due only in a far future that the claimers pass as their
     * "now", so that the service's own job leaves them alone.
     */
    @Test
    void concurrentClaimersTakeEveryDueOrderExactlyOnce() throws Exception {
        Instant future = Instant.now().plus(Duration.ofDays(3650)).truncatedTo(ChronoUnit.MICROS);
        Duration expiry = Duration.ofHours(2);
        Duration lease = Duration.ofHours(1);
        String prefix = "claim-" + UUID.randomUUID() + "-";
        int due = 300;
        assertEquals(due, db.count("""
                WITH i AS (
                    INSERT INTO orders (id, user_id, amount_cents, currency, status, created_at, gateway, query_at)
                    SELECT $1 || g, $2, 1999, 'CNY', 'WAIT_PAY', $3,
                           CASE g % 3 WHEN 0 THEN 'wechatpay' WHEN 1 THEN 'alipay' END, $4 - g * interval '1 ms'
                    FROM generate_series(1, 300) g
                    RETURNING 1)
                SELECT count(*) FROM i""", prefix, user, ts(future.minusSeconds(60)), ts(future)));
        // and one that leaves the schedule instead: it expired
        db.count("""
                WITH i AS (
                    INSERT INTO orders (id, user_id, amount_cents, currency, status, created_at, query_at)
                    VALUES ($1 || 'expired', $2, 1999, 'CNY', 'WAIT_PAY', $3, $4) RETURNING 1)
                SELECT count(*) FROM i""", prefix, user, ts(future.minus(expiry).minusSeconds(1)), ts(future));

        int claimers = 8;
        ExecutorService threads = Executors.newFixedThreadPool(claimers);
        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<List<String>>> claimed = new ArrayList<>();
        for (int c = 0; c < claimers; c++) {
            claimed.add(CompletableFuture.supplyAsync(() -> {
                List<String> mine = new ArrayList<>();
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                while (true) {
                    List<QueryClaim> batch = orders.claimQueries(pool, future, 7, future.minus(expiry),
                            List.of(PaymentGateway.WECHATPAY, PaymentGateway.ALIPAY), lease)
                            .await().atMost(Duration.ofSeconds(30));
                    if (batch.isEmpty()) {
                        return mine;
                    }
                    batch.stream().map(QueryClaim::orderId).filter(id -> id.startsWith(prefix)).forEach(mine::add);
                }
            }, threads));
        }
        start.countDown();
        List<String> all = new ArrayList<>();
        for (CompletableFuture<List<String>> claimer : claimed) {
            all.addAll(claimer.get());
        }
        threads.shutdown();
        Set<String> distinct = new HashSet<>(all);
        assertEquals(due, all.size(), "claims");
        assertEquals(due, distinct.size(), "orders claimed");
        assertTrue(claimed.stream().filter(c -> !c.join().isEmpty()).count() > 1, "the claimers shared the work");
        assertEquals(due, db.count("SELECT count(*) FROM orders WHERE id LIKE $1 AND queries = 1 AND query_at = $2",
                prefix + "%", ts(future.plus(lease))));
        assertEquals(1, db.count("SELECT count(*) FROM orders WHERE id = $1 AND queries = 0 AND query_at IS NULL",
                prefix + "expired"));
        // the lease holds: asked again at the same moment, nothing is due
        assertTrue(orders.claimQueries(pool, future, 1000, future.minus(expiry),
                List.of(PaymentGateway.WECHATPAY, PaymentGateway.ALIPAY), lease).await().atMost(Duration.ofSeconds(30))
                .stream().noneMatch(c -> c.orderId().startsWith(prefix)));
        db.count("WITH d AS (DELETE FROM orders WHERE id LIKE $1 RETURNING 1) SELECT count(*) FROM d", prefix + "%");
    }
}
