package dev.idem.ops;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testing.Db;
import dev.idem.testing.Keycloak;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Operators by their provider's tokens (SPEC section 11), against the realm of
 * `./idem services keycloak`: a viewer reads and changes nothing, an operator changes, a customer
 * and every forged token are refused with their codes, and the audit trail keeps each change and
 * refusal, never rewritten.
 */
@QuarkusTest
@TestProfile(OperatorsTest.WithKeycloak.class)
class OperatorsTest {

    /** The provider named, no break-glass token; audit entries archived after a day. */
    public static class WithKeycloak implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.oidc.auth-server-url", Keycloak.REALM, "idem.admin.token", "",
                    "idem.admin.audit-retention", "1d");
        }
    }

    @Inject
    Pool pool;

    static Response as(String token, String method, String path) {
        return given().header("Authorization", "Bearer " + token).request(method, path);
    }

    @Test
    void aViewerReadsAnOperatorChangesACustomerNeither() {
        Instant since = Instant.now();
        String viewer = Keycloak.token("viewer");
        String operator = Keycloak.token("operator");
        String alice = Keycloak.token("alice");

        as(viewer, "GET", "/admin/reconciliation").then().statusCode(200);
        as(viewer, "GET", "/admin/me").then().statusCode(200).body("role", equalTo("viewer"))
                .body("name", equalTo(Keycloak.claims(viewer).getString("name")));
        as(viewer, "POST", "/admin/archive").then().statusCode(403).contentType("application/problem+json")
                .body("code", equalTo("ADMIN_FORBIDDEN"));
        as(alice, "GET", "/admin/reconciliation").then().statusCode(403).body("code", equalTo("ADMIN_FORBIDDEN"));
        as(operator, "POST", "/admin/archive").then().statusCode(200);
        as(Keycloak.opsToken(), "POST", "/admin/dedup/redrive").then().statusCode(200);

        List<Map<String, Object>> entries = auditSince(since, Keycloak.claims(viewer), Keycloak.claims(operator),
                Keycloak.claims(alice), Keycloak.claims(Keycloak.opsToken()));
        Map<String, Object> newest = entries.get(0);
        assertEquals("dedup.redrive", newest.get("action"), entries.toString());
        assertEquals(200, newest.get("status"));
        assertEquals(List.of(Operator.OPERATOR), newest.get("roles"));
        Map<String, Object> archived = entries.get(1);
        assertEquals("archive", archived.get("action"));
        assertEquals(Keycloak.claims(operator).getString("sub"), archived.get("subject"));
        assertEquals(Keycloak.claims(operator).getString("name"), archived.get("name"));
        assertTrue(((Map<?, ?>) archived.get("result")).containsKey("dedupRecords"), archived.toString());
        Map<String, Object> refusedAlice = entries.get(2);
        assertEquals(List.of(Keycloak.claims(alice).getString("sub"), "read", 403),
                List.of(refusedAlice.get("subject"), refusedAlice.get("action"), refusedAlice.get("status")));
        Map<String, Object> refusedViewer = entries.get(3);
        assertEquals(List.of(Keycloak.claims(viewer).getString("sub"), "archive", 403),
                List.of(refusedViewer.get("subject"), refusedViewer.get("action"), refusedViewer.get("status")));
        assertEquals(4, entries.size(), "reads that were let in are not audited: " + entries);
    }

    /** A provider that gives roles as groups (Okta, Keycloak's group mapper): {@code groups} counts like realm roles. */
    @Test
    void rolesMayComeAsGroups() {
        String operator = Keycloak.token("operator");
        JsonObject byGroup = Keycloak.claims(operator).copy();
        byGroup.remove("realm_access");
        byGroup.put("groups", List.of(Operator.OPERATOR));
        String token = Keycloak.signed(Keycloak.header(operator), byGroup);
        as(token, "GET", "/admin/me").then().statusCode(200).body("role", equalTo("operator"));
        as(token, "POST", "/admin/archive").then().statusCode(200);
        byGroup.put("groups", List.of("accounting"));
        as(Keycloak.signed(Keycloak.header(operator), byGroup), "GET", "/admin/me").then().statusCode(403);
    }

    /**
     * The trail's entries from {@code since} on by these tokens' subjects, newest first: other tests
     * write entries too, some at a moved clock's later times.
     */
    static List<Map<String, Object>> auditSince(Instant since, JsonObject... tokens) {
        List<String> subjects = java.util.Arrays.stream(tokens).map(claims -> claims.getString("sub")).toList();
        List<Map<String, Object>> entries = as(Keycloak.token("viewer"), "GET", "/admin/audit?limit=1000&since=" + since)
                .then().statusCode(200).extract().jsonPath().getList("");
        return entries.stream().filter(entry -> subjects.contains(entry.get("subject"))).toList();
    }

    @Test
    void theTrailsListingRefusesALimitOrInstantItCannotRead() {
        String viewer = Keycloak.token("viewer");
        for (String query : List.of("limit=0", "limit=1001", "limit=ten", "since=yesterday")) {
            as(viewer, "GET", "/admin/audit?" + query).then().statusCode(400).contentType("application/problem+json");
        }
        as(viewer, "GET", "/admin/audit?limit=1000").then().statusCode(200);
    }

    @Test
    void noTokenAndTheStaticTokenAreUnauthorized() {
        given().get("/admin/reconciliation").then().statusCode(401).contentType("application/problem+json")
                .body("code", equalTo("ADMIN_UNAUTHORIZED"));
        given().header("X-Admin-Token", "test-admin-token").post("/admin/archive").then().statusCode(401)
                .body("code", equalTo("ADMIN_UNAUTHORIZED"));
    }

    /**
     * Each forged or foreign token is 401 on a change, nothing is changed (no entry of that change
     * answered 200), and the attempt is audited under the subject it claims.
     */
    @Test
    void hostileTokensAreRefusedAndAudited() {
        String real = Keycloak.token("operator");
        JsonObject header = Keycloak.header(real);
        JsonObject claims = Keycloak.claims(real);
        long now = Instant.now().getEpochSecond();
        String viewer = Keycloak.token("viewer");
        String[] parts = viewer.split("\\.");
        JsonObject promoted = Keycloak.claims(viewer).put("realm_access",
                new JsonObject().put("roles", List.of(Operator.OPERATOR)));

        // the control: the same claims signed here with the realm's key pass, so each refusal below is its change's
        as(Keycloak.signed(header, claims), "GET", "/admin/me").then().statusCode(200).body("role", equalTo("operator"));

        Map<String, String> hostile = new LinkedHashMap<>();
        hostile.put("expired", Keycloak.signed(header, claims.copy().put("iat", now - 900).put("exp", now - 600)));
        hostile.put("not yet valid", Keycloak.signed(header, claims.copy().put("nbf", now + 600).put("exp", now + 900)));
        hostile.put("another issuer", Keycloak.signed(header, claims.copy().put("iss", "http://127.0.0.1:8180/realms/other")));
        hostile.put("another audience", Keycloak.signed(header, claims.copy().put("aud", "another-service")));
        hostile.put("alg none", Keycloak.unsigned(new JsonObject().put("alg", "none").put("typ", "JWT"), claims));
        hostile.put("HS256 with the public key", Keycloak.hmacSigned(header.copy().put("alg", "HS256"), claims,
                Keycloak.publicKeyPem()));
        hostile.put("unknown kid", Keycloak.signed(header.copy().put("kid", "not-a-key-of-the-realm"), claims));
        hostile.put("tampered payload", parts[0] + "." + Keycloak.encode(promoted) + "." + parts[2]);

        Instant since = Instant.now();
        hostile.forEach((kind, token) -> as(token, "POST", "/admin/dedup/redrive").then()
                .statusCode(401).contentType("application/problem+json").body("code", equalTo("ADMIN_UNAUTHORIZED")));
        List<Map<String, Object>> entries = auditSince(since, claims, Keycloak.claims(viewer));
        assertEquals(hostile.size(), entries.size(), entries.toString());
        for (Map<String, Object> entry : entries) {
            assertEquals(401, entry.get("status"), entry.toString());
            assertEquals("dedup.redrive", entry.get("action"), entry.toString());
            assertTrue(List.of(claims.getString("sub"), Keycloak.claims(viewer).getString("sub")).contains(entry.get("subject")),
                    entry.toString());
        }
    }

    @Test
    void theTrailCannotBeRewrittenNorDeletedOnlyArchivedPastItsRetention() {
        Db db = new Db(pool);
        String old = "old-" + java.util.UUID.randomUUID();
        db.count("""
                WITH x AS (INSERT INTO admin_audit (at, subject, roles, action, parameters, status)
                VALUES (now() - interval '2 days', $1, '{}', 'archive', '{}', 200) RETURNING 1) SELECT count(*) FROM x""", old);
        as(Keycloak.token("operator"), "POST", "/admin/archive").then().statusCode(200)
                .body("auditEntries", org.hamcrest.Matchers.greaterThanOrEqualTo(1));
        assertEquals(0, db.count("SELECT count(*) FROM admin_audit WHERE subject = $1", old));
        assertEquals(1, db.count("SELECT count(*) FROM admin_audit_archive WHERE subject = $1 AND action = 'archive'", old));
        assertEquals(1, db.count("SELECT count(*) FROM admin_audit WHERE action = 'archive' AND status = 200 AND at > now() - interval '1 minute'"
                + " AND (result->>'auditEntries')::int >= 1"));
        assertTrue(db.count("SELECT count(*) FROM admin_audit") > 0);
        assertThrows(RuntimeException.class, () -> db.count("WITH x AS (UPDATE admin_audit SET subject = 'nobody' RETURNING 1) SELECT count(*) FROM x"));
        assertThrows(RuntimeException.class, () -> db.count("WITH x AS (DELETE FROM admin_audit RETURNING 1) SELECT count(*) FROM x"));
        assertThrows(RuntimeException.class, () -> db.count("WITH x AS (DELETE FROM admin_audit_archive RETURNING 1) SELECT count(*) FROM x"));
        assertEquals(0, db.count("SELECT count(*) FROM admin_audit WHERE subject = 'nobody'"));
    }
}
