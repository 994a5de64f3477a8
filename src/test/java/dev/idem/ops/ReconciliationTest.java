package dev.idem.ops;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasItems;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Db;
import dev.idem.testing.Storm;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** 对账 after the incident: zeros when healthy, findings when a coupon or a grant is lost, and repair. */
@QuarkusTest
@TestProfile(ReconciliationTest.NoGrace.class)
class ReconciliationTest {

    /** A grant is overdue the moment it is not there, so a test need not wait out the grace period. */
    public static class NoGrace implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("idem.reconciliation.grace", "0s");
        }
    }

    @Inject
    Pool pool;

    static JsonPath report(Instant since) {
        return given().header("X-Admin-Token", AdminTest.TOKEN).get("/admin/reconciliation?since=" + since)
                .then().statusCode(200).extract().jsonPath();
    }

    @Test
    void zerosAfterTheStormThenALostCouponAndALostGrantAreFoundAndRepaired() {
        Instant since = Instant.now().minusSeconds(1);
        Db db = new Db(pool);
        Storm storm = new Storm(db).createOrders(60);
        storm.deliver(6, 32, null);
        storm.assertOneCouponPerOrder();

        JsonPath healthy = report(since);
        assertEquals(true, healthy.getBoolean("healthy"), healthy.prettify());
        for (String check : new String[] {"paidOrdersWithoutCoupon", "couponsWithoutPaidOrder", "ordersWithSeveralCoupons",
                "hangingDedupRecords", "failedDedupRecords", "unresolvedAnomalies", "staleOutboxEvents"}) {
            assertEquals(0, healthy.getInt("checks." + check + ".count"), check);
        }

        String couponDeleted = storm.orderIds.get(0);
        String grantLost = storm.orderIds.get(1);
        db.count("WITH d AS (DELETE FROM coupons WHERE source_key = $1 RETURNING 1) SELECT count(*) FROM d", "paid:" + couponDeleted);
        db.count("WITH d AS (DELETE FROM coupons WHERE source_key = $1 RETURNING 1) SELECT count(*) FROM d", "paid:" + grantLost);
        db.count("WITH d AS (DELETE FROM outbox_event WHERE event_key = $1 RETURNING 1) SELECT count(*) FROM d", "paid:" + grantLost);

        JsonPath broken = report(since);
        assertEquals(false, broken.getBoolean("healthy"));
        assertEquals(2, broken.getInt("checks.paidOrdersWithoutCoupon.count"));
        org.hamcrest.MatcherAssert.assertThat(broken.getList("checks.paidOrdersWithoutCoupon.samples", String.class),
                hasItems(couponDeleted, grantLost));

        given().header("X-Admin-Token", AdminTest.TOKEN).post("/admin/reconciliation/repair").then()
                .statusCode(200).body("grantsRepublished", greaterThanOrEqualTo(2));
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250))
                .until(() -> report(since).getBoolean("healthy"));

        for (String order : storm.orderIds) {
            assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE source_key = $1", "paid:" + order), order);
        }
        // repair is idempotent: running it again on a healthy system changes no count
        given().header("X-Admin-Token", AdminTest.TOKEN).post("/admin/reconciliation/repair").then().statusCode(200);
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            Topics.drainGrants(kafka, db, storm.user);
        }
        for (String order : storm.orderIds) {
            assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE source_key = $1", "paid:" + order), order);
        }
        assertEquals(true, report(since).getBoolean("healthy"));
    }
}
