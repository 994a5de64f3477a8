package dev.idem.ops;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasItems;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.coupons.CouponService;
import dev.idem.coupons.PaidOrderCampaign;
import dev.idem.payments.PaymentService;
import dev.idem.pipeline.DedupAdmin;
import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Http;
import dev.idem.testing.Db;
import dev.idem.testing.Storm;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.vertx.core.json.JsonObject;
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

    /**
     * What a failover to a standby that had not received the commits leaves behind: the payment was
     * answered SUCCESS (the gateway stops notifying), its grant was published and applied, and then
     * both transactions are gone from the database while Redis still says DONE for their keys. A
     * later notification would be answered as a duplicate from Redis and the order stay unpaid:
     * the report shows both marks, and repair drops them, so that the next notification applies the
     * payment, once, with one coupon.
     */
    @Test
    void aCommitLostAfterItsAnswerIsFoundByItsDoneMarkAndAppliedAgainAfterRepair() {
        Db db = new Db(pool);
        Storm storm = new Storm(db).createOrders(1);
        storm.deliver(1, 1, null);
        storm.assertOneCouponPerOrder();
        String order = storm.orderIds.get(0);
        String paymentMark = PaymentService.SCOPE + ":" + storm.dedupKeys()[0];
        String grantMark = CouponService.SCOPE + ":" + PaidOrderCampaign.bizKey(order);
        long before = report(Instant.EPOCH).getLong("checks." + DedupAdmin.MARKS_WITHOUT_RECORD + ".count");

        db.count("""
                WITH c AS (DELETE FROM coupons WHERE source_key = $1 RETURNING 1),
                     e AS (DELETE FROM outbox_event WHERE event_key = $1 RETURNING 1),
                     r AS (DELETE FROM dedup_record WHERE (scope = $2 AND key = $1) OR (scope = $3 AND key = $4) RETURNING 1),
                     o AS (UPDATE orders SET status = 'WAIT_PAY', trade_no = NULL, paid_at = NULL, campaign = NULL WHERE id = $5 RETURNING 1)
                SELECT (SELECT count(*) FROM c) + (SELECT count(*) FROM e) + (SELECT count(*) FROM r) + (SELECT count(*) FROM o)""",
                PaidOrderCampaign.bizKey(order), CouponService.SCOPE, PaymentService.SCOPE, storm.dedupKeys()[0], order);

        JsonPath lost = report(Instant.EPOCH);
        assertEquals(false, lost.getBoolean("healthy"));
        assertEquals(before + 2, lost.getLong("checks." + DedupAdmin.MARKS_WITHOUT_RECORD + ".count"), lost.prettify());
        org.hamcrest.MatcherAssert.assertThat(lost.getList("checks." + DedupAdmin.MARKS_WITHOUT_RECORD + ".samples",
                String.class), hasItems(paymentMark, grantMark));
        // the harm the check is for: the mark answers the gateway's next notification as a duplicate
        Http.Answer masked = storm.deliverOnce().get(0);
        assertEquals(true, new JsonObject(masked.body()).getBoolean("duplicate"), masked.body());
        assertEquals(0, db.count("SELECT count(*) FROM orders WHERE id = $1 AND status = 'PAID'", order));

        given().header("X-Admin-Token", AdminTest.TOKEN).post("/admin/reconciliation/repair").then()
                .statusCode(200).body("marksDropped", greaterThanOrEqualTo(2));
        assertEquals(before, report(Instant.EPOCH).getLong("checks." + DedupAdmin.MARKS_WITHOUT_RECORD + ".count"));

        Http.Answer applied = storm.deliverOnce().get(0);
        assertEquals(false, new JsonObject(applied.body()).getBoolean("duplicate", false), applied.body());
        storm.assertPaidExactlyOnce();
        storm.assertOneCouponPerOrder();
    }
}
