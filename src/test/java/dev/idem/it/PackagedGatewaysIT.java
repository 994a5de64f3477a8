package dev.idem.it;

import static dev.idem.testing.Callbacks.newOrder;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.AlipaySimulator;
import dev.idem.testing.GatewayApi;
import dev.idem.testing.GatewayBillsOn;
import dev.idem.testing.GatewayQueriesOn;
import dev.idem.testing.Http;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.restassured.path.json.JsonPath;
import java.net.http.HttpRequest;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The gateways in the artifact as it ships, against their simulators: what a native executable
 * holds only when it was told to (the signatures' algorithms, AES-GCM, the GBK of Alipay's bills)
 * is used here as a deployment uses it, so a build that left one out fails here, not in production.
 */
@QuarkusIntegrationTest
@WithTestResource(PackagedGatewaysIT.Deployment.class)
class PackagedGatewaysIT {

    static final long AMOUNT = 1999;
    static final String ADMIN = "packaged-it-admin-token";
    static final Jdbc db = new Jdbc("jdbc:" + ServiceProcess.DATABASE, "idem", "idem");

    /** {@link PackagedServiceIT}'s deployment with both gateways on, their APIs on loopback, the active query off. */
    public static class Deployment implements QuarkusTestResourceLifecycleManager {

        private final GatewayQueriesOn.Apis apis = new GatewayQueriesOn.Apis();

        @Override
        public Map<String, String> start() {
            Map<String, String> config = new HashMap<>(new PackagedServiceIT.Deployment().start());
            config.putAll(new GatewayBillsOn().getConfigOverrides());
            config.putAll(apis.start());
            return config;
        }

        @Override
        public void stop() {
            apis.stop();
        }
    }

    final String user = "packaged-gateways-" + UUID.randomUUID();

    /** WeChat Pay's notification: the platform's RSA signature verified, the resource opened with AES-GCM. */
    @Test
    void aWechatPayNotificationPaysTheOrderOnce() {
        notifiedTwice(GatewayQueriesOn.Apis.wechatpay(), "wechatpay", "4200");
    }

    /** Alipay's notification: its RSA2 sign verified. */
    @Test
    void anAlipayNotificationPaysTheOrderOnce() {
        notifiedTwice(GatewayQueriesOn.Apis.alipay(), "alipay", "2026");
    }

    /** WeChat Pay's bill fetched: the request signed with the merchant's key, the answer verified, the file's SHA1 checked. */
    @Test
    void aWechatPayBillFetchedPaysTheOrderWhoseNotificationWasLost() {
        String order = newOrder(user, AMOUNT, "wechatpay");
        String trade = "4200" + order.replace("-", "");
        GatewayQueriesOn.Apis.wechatpay().payWithoutNotifying(order, trade, AMOUNT);

        JsonPath report = importFetched("wechatpay");
        assertEquals(GatewayQueriesOn.Apis.wechatpay().billLines(GatewayApi.today()).size(), report.getInt("lines"));
        assertPaidOnce(order, trade);
    }

    /** Alipay's bill fetched: the query signed RSA2, the answer's sign verified, the zip's GBK text read; given again as a file it applies nothing. */
    @Test
    void anAlipayBillInGbkPaysTheOrderWhoseNotificationWasLostOnce() {
        String order = newOrder(user, AMOUNT, "alipay");
        String trade = "2026" + order.replace("-", "");
        GatewayQueriesOn.Apis.alipay().payWithoutNotifying(order, trade, AMOUNT);

        importFetched("alipay");
        assertPaidOnce(order, trade);

        LocalDate today = GatewayApi.today();
        byte[] zip = AlipaySimulator.tradeBill(today, GatewayQueriesOn.Apis.alipay().billLines(today));
        given().header("X-Admin-Token", ADMIN).contentType("application/zip").body(zip)
                .post("/admin/reconciliation/gateways/alipay/bills?date=" + today)
                .then().statusCode(200).body("source", equalTo("file")).body("applied", equalTo(0));
        assertPaidOnce(order, trade);
    }

    /** An order paid through {@code gateway}, notified, then notified again late: paid once. */
    void notifiedTwice(GatewayApi api, String gateway, String tradePrefix) {
        String order = newOrder(user, AMOUNT, gateway);
        String trade = tradePrefix + order.replace("-", "");
        send(api.pay(order, trade, AMOUNT).orElseThrow());
        send(api.lateNotification(order));
        assertPaidOnce(order, trade);
    }

    static void send(Supplier<HttpRequest> notification) {
        Http.Answer answer = new Http().all(List.of(notification), 1, null).get(0);
        assertEquals(200, answer.status(), answer.body());
    }

    static JsonPath importFetched(String gateway) {
        return given().header("X-Admin-Token", ADMIN)
                .post("/admin/reconciliation/gateways/" + gateway + "/bills?date=" + GatewayApi.today())
                .then().statusCode(200).body("gateway", equalTo(gateway)).extract().jsonPath();
    }

    void assertPaidOnce(String order, String trade) {
        given().header("X-User-Id", user).get("/api/orders/" + order).then()
                .statusCode(200).body("status", equalTo("PAID")).body("tradeNo", equalTo(trade));
        assertEquals(1, db.count("SELECT count(*) FROM dedup_record WHERE scope = 'payment-callback' AND key = ?",
                trade + ":SUCCESS"));
    }
}
