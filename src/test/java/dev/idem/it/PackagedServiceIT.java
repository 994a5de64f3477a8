package dev.idem.it;

import static dev.idem.testing.Callbacks.deliver;
import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Problems.problem;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.idem.testing.Gateway;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The artifact as it ships — the runnable jar, or the native executable where {@code -Dnative}
 * built one — in its prod profile, configured from outside as a deployment would configure it.
 */
@QuarkusIntegrationTest
@WithTestResource(PackagedServiceIT.Deployment.class)
class PackagedServiceIT {

    /**
     * The prod profile has no secrets of its own. Failsafe keeps the artifact running until its JVM
     * ends, beside the instances of the tests after this one, so it serves HTTP alone: it consumes,
     * relays and recovers nothing those instances are there to handle, and pays orders without a
     * campaign, so it leaves no grant for them either.
     */
    public static class Deployment implements QuarkusTestResourceLifecycleManager {
        @Override
        public Map<String, String> start() {
            return Map.of(
                    "idem.callback.secret", Gateway.SECRET,
                    "idem.admin.token", "packaged-it-admin-token",
                    "quarkus.datasource.reactive.url", ServiceProcess.DATABASE,
                    "quarkus.redis.hosts", "redis://127.0.0.1:6379/4",
                    "mp.messaging.incoming.coupon-grants.enabled", "false",
                    "mp.messaging.incoming.payment-callbacks.enabled", "false",
                    "idem.outbox.relay-enabled", "false",
                    "idem.pipeline.recovery-interval", "off",
                    "idem.campaign.paid-coupon-template", "");
        }

        @Override
        public void stop() {}
    }

    @Test
    void readyOnceItsServersAnswer() {
        given().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"));
    }

    @Test
    void aSignedCallbackPaysTheOrderOnce() {
        String user = "packaged-" + UUID.randomUUID();
        String order = newOrder(user, 1999);
        String body = Gateway.callback("T-" + order, order, 1999, "SUCCESS");

        deliver(body).then().statusCode(200).body("code", equalTo("SUCCESS")).body("duplicate", nullValue());
        deliver(body).then().statusCode(200).body("code", equalTo("SUCCESS")).body("duplicate", equalTo(true));
        given().header("X-User-Id", user).get("/api/orders/" + order).then()
                .statusCode(200).body("status", equalTo("PAID")).body("tradeNo", equalTo("T-" + order));
    }

    /** The console's files are in the artifact (a native executable holds only the resources it was told to). */
    @Test
    void theConsoleIsServedAndItsDataNeedsTheToken() {
        for (String file : new String[] {"/admin/console", "/admin/console/console.js", "/admin/console/console.css"}) {
            given().get(file).then().statusCode(200).header("Content-Security-Policy", startsWith("default-src 'none'"));
        }
        given().get("/admin/console").then().body(containsString("Admin token"));
        problem(given().get("/admin/history"), 401, "ADMIN_UNAUTHORIZED");
        given().header("X-Admin-Token", "packaged-it-admin-token").get("/admin/history").then()
                .statusCode(200).body("intervalSeconds", equalTo(10));
    }

    @Test
    void badInputIsAnsweredWithProblems() {
        String user = "packaged-" + UUID.randomUUID();
        problem(given().header("X-User-Id", user).header("Idempotency-Key", "k").contentType("application/json")
                .body("{\"amountCents\":1999,\"currency\":\"CNY\",\"coupon\":\"FREE\"}").post("/api/orders"),
                400, "BAD_REQUEST");
        String body = Gateway.callback("T-forged", "any", 1999, "SUCCESS");
        long now = Gateway.now();
        problem(deliver(body, now, Gateway.sign("not-the-secret", now, body)), 401, "SIGNATURE_INVALID");
        problem(given().header("X-User-Id", user).get("/api/orders/no-such-order"), 404, "ORDER_NOT_FOUND");
        String nul = Gateway.callback("T-nul\\u0000", "any", 1999, "SUCCESS");
        problem(deliver(nul), 400, "BAD_REQUEST");
        problem(given().header("X-User-Id", user).header("Idempotency-Key", "twice").contentType("application/json")
                .body("{\"amountCents\":5,\"amountCents\":1999,\"currency\":\"CNY\"}").post("/api/orders"),
                400, "BAD_REQUEST");
        problem(given().header("X-User-Id", "u".repeat(129)).get("/api/orders/any"), 400, "USER_INVALID");
        problem(given().header("X-User-Id", user).get("/api/orders/" + "o".repeat(5000)), 414, "URI_TOO_LONG");
        problem(given().header("X-User-Id", user).header("X-Pad", "p".repeat(21_000)).get("/api/orders/any"),
                431, "HEADERS_TOO_LARGE");
    }
}
