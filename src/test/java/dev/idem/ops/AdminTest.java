package dev.idem.ops;

import static dev.idem.testing.Callbacks.deliver;
import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import io.quarkus.test.junit.QuarkusTest;
import java.util.UUID;
import org.junit.jupiter.api.Test;

@QuarkusTest
class AdminTest {

    static final String TOKEN = "test-admin-token";

    @Test
    void adminEndpointsNeedTheAdminToken() {
        for (String path : new String[] {"/admin/reconciliation", "/admin/dedup/payment-callback/x"}) {
            given().get(path).then().statusCode(401)
                    .contentType("application/problem+json").body("code", equalTo("ADMIN_UNAUTHORIZED"));
            given().header("X-Admin-Token", "guess").get(path).then().statusCode(401);
        }
        for (String path : new String[] {"/admin/archive", "/admin/dedup/redrive", "/admin/reconciliation/repair"}) {
            given().post(path).then().statusCode(401).body("code", equalTo("ADMIN_UNAUTHORIZED"));
        }
        given().header("X-Admin-Token", TOKEN).get("/admin/reconciliation").then().statusCode(200);
    }

    @Test
    void theConsolesOwnFilesNeedNoTokenAndMayLoadNothingFromElsewhere() {
        for (String path : new String[] {"/admin/console", "/admin/console/console.js", "/admin/console/console.css"}) {
            given().get(path).then().statusCode(200)
                    .header("Content-Security-Policy", containsString("default-src 'none'"))
                    .header("Content-Security-Policy", containsString("connect-src 'self'"))
                    .header("Content-Security-Policy", containsString("script-src 'self'"));
        }
        given().get("/admin/console").then().contentType(startsWith("text/html")).body(containsString("Admin token"));
        given().get("/admin/console/nothing.js").then().statusCode(404);
        // only those files: whatever else is under /admin, the console's data included, needs the token
        given().get("/admin/history").then().statusCode(401).body("code", equalTo("ADMIN_UNAUTHORIZED"));
        given().header("X-Admin-Token", TOKEN).get("/admin/history").then().statusCode(200)
                .body("intervalSeconds", equalTo(10)).body("historySeconds", equalTo(3600));
    }

    @Test
    void oneKeysTrailShowsRedisAndTheRecord() {
        String order = newOrder("trail-" + UUID.randomUUID(), 1999);
        deliver(callback("T-" + order, order, 1999, "SUCCESS")).then().statusCode(200);

        given().header("X-Admin-Token", TOKEN).get("/admin/dedup/payment-callback/T-" + order + ":SUCCESS").then()
                .statusCode(200)
                .body("scope", equalTo("payment-callback"))
                .body("key", equalTo("T-" + order + ":SUCCESS"))
                .body("record.status", equalTo("DONE"))
                .body("record.attempts", equalTo(1))
                .body("record.result.code", equalTo("SUCCESS"))
                .body("redis", startsWith("DONE "))
                .body("archived.size()", equalTo(0));
        given().header("X-Admin-Token", TOKEN).get("/admin/dedup/payment-callback/never-seen").then()
                .statusCode(404).body("code", equalTo("DEDUP_KEY_NOT_FOUND"));
        given().header("X-Admin-Token", TOKEN).get("/admin/reconciliation?since=yesterday").then()
                .statusCode(400).body("code", equalTo("BAD_REQUEST"));
        given().header("X-Admin-Token", TOKEN).get("/admin/dedup/order-submit/nobody:nothing").then()
                .statusCode(404).body("redis", nullValue());
    }
}
