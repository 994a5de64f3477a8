package dev.idem.web;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.Callbacks;
import dev.idem.testing.Db;
import dev.idem.testing.Keycloak;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code idem.identity=jwt}: the caller of a user endpoint is the {@code sub} of the bearer token
 * the realm of `./idem services keycloak` issued; an {@code X-User-Id} is ignored, and without a
 * valid token there is no user. The tests' static admin token stays set here: beside the provider
 * it is the break-glass.
 */
@QuarkusTest
@TestProfile(UsersByTokenTest.ByToken.class)
class UsersByTokenTest {

    public static class ByToken implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.oidc.auth-server-url", Keycloak.REALM, "idem.identity", "jwt");
        }
    }

    @Inject
    Pool pool;

    @Test
    void theTokensSubjectIsTheUserWhateverXUserIdSays() {
        String alice = Keycloak.token("alice");
        String aliceId = Keycloak.claims(alice).getString("sub");
        String bobId = Keycloak.claims(Keycloak.token("bob")).getString("sub");

        String order = given().header("Authorization", "Bearer " + alice).header("X-User-Id", bobId)
                .header("Idempotency-Key", UUID.randomUUID().toString()).contentType("application/json")
                .body(Callbacks.orderBody(1999, null)).post("/api/orders")
                .then().statusCode(201).extract().path("orderId");
        assertEquals(aliceId, new Db(pool).string("SELECT user_id FROM orders WHERE id = $1", order));

        given().header("Authorization", "Bearer " + alice).get("/api/users/" + aliceId + "/coupons").then().statusCode(200);
        given().header("Authorization", "Bearer " + alice).header("X-User-Id", bobId)
                .get("/api/users/" + bobId + "/coupons").then().statusCode(404);
    }

    @Test
    void theBreakGlassTokenActsAsAnOperatorInTheAuditTrail() {
        given().header("X-Admin-Token", "test-admin-token").post("/admin/archive").then().statusCode(200);
        given().header("X-Admin-Token", "not-the-token").post("/admin/archive").then().statusCode(401)
                .body("code", equalTo("ADMIN_UNAUTHORIZED"));
        assertEquals(1, new Db(pool).count("""
                SELECT count(*) FROM (SELECT subject, action, status FROM admin_audit ORDER BY id DESC LIMIT 1) newest
                WHERE subject = 'admin-token' AND action = 'archive' AND status = 200"""));
    }

    @Test
    void noValidTokenIsNoUser() {
        given().header("X-User-Id", "alice").post("/api/tokens").then().statusCode(401)
                .contentType("application/problem+json").body("code", equalTo("USER_MISSING"));
        String alice = Keycloak.token("alice");
        long now = Instant.now().getEpochSecond();
        JsonObject expired = Keycloak.claims(alice).put("iat", now - 900).put("exp", now - 600);
        given().header("Authorization", "Bearer " + Keycloak.signed(Keycloak.header(alice), expired))
                .post("/api/tokens").then().statusCode(401).body("code", equalTo("USER_MISSING"));
        JsonObject elsewhere = Keycloak.claims(alice).put("aud", "another-service");
        given().header("Authorization", "Bearer " + Keycloak.signed(Keycloak.header(alice), elsewhere))
                .post("/api/tokens").then().statusCode(401).body("code", equalTo("USER_MISSING"));
        given().header("Authorization", "Bearer " + alice).post("/api/tokens").then().statusCode(201);
    }
}
