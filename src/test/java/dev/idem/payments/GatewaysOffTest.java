package dev.idem.payments;

import static dev.idem.testing.Problems.problem;
import static io.restassured.RestAssured.given;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

/** Without their keys (the test profile configures none) both gateways are switched off: 404, like an unknown path. */
@QuarkusTest
class GatewaysOffTest {

    @Test
    void weChatPayWithoutKeysAnswers404() {
        problem(given().contentType("application/json").body("{}").post("/api/payments/wechatpay/notify"),
                404, "NOT_FOUND");
        problem(given().get("/api/payments/wechatpay/notify"), 404, "NOT_FOUND");
        problem(given().contentType("text/plain").body("x").post("/api/payments/wechatpay/notify/x"), 404, "NOT_FOUND");
    }

    @Test
    void alipayWithoutKeysAnswers404() {
        problem(given().contentType("application/x-www-form-urlencoded").body("a=b").post("/api/payments/alipay/notify"),
                404, "NOT_FOUND");
        problem(given().get("/api/payments/alipay/notify"), 404, "NOT_FOUND");
    }

    /** A gateway that is off has no bills to import or to report, whether fetched or given. */
    @Test
    void theBillsOfAGatewayThatIsOffAre404() {
        for (String gateway : new String[] {"wechatpay", "alipay"}) {
            problem(given().header("X-Admin-Token", "test-admin-token")
                    .post("/admin/reconciliation/gateways/" + gateway + "/bills?date=2026-12-01"), 404, "GATEWAY_NOT_FOUND");
            problem(given().header("X-Admin-Token", "test-admin-token").contentType("text/csv").body("x")
                    .post("/admin/reconciliation/gateways/" + gateway + "/bills?date=2026-12-01"), 404, "GATEWAY_NOT_FOUND");
            problem(given().header("X-Admin-Token", "test-admin-token")
                    .get("/admin/reconciliation/gateways/" + gateway + "/bills/2026-12-01"), 404, "GATEWAY_NOT_FOUND");
        }
    }
}
