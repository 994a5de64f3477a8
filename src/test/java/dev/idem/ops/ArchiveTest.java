package dev.idem.ops;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Db;
import dev.idem.testing.Http;
import dev.idem.testing.Metrics;
import dev.idem.testing.Storm;
import dev.idem.testing.Topics;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Dedup records past retention move to the archive while traffic goes on; nothing is lost, and a
 * duplicate that arrives after its record was archived is still stopped — by the state machine
 * for payments, by the coupons' unique source for grants.
 */
@QuarkusTest
class ArchiveTest {

    @Inject
    Pool pool;

    @Inject
    RedisDataSource redis;

    /** Makes this storm's records due, as if their retention had passed, and archives them. */
    static int ageAndArchive(Db db, String scope, String[] keys) {
        db.count("WITH u AS (UPDATE dedup_record SET expires_at = now() - interval '1 second' "
                + "WHERE scope = $1 AND key = ANY($2) RETURNING 1) SELECT count(*) FROM u", scope, keys);
        return given().header("X-Admin-Token", AdminTest.TOKEN).post("/admin/archive")
                .then().statusCode(200).extract().path("dedupRecords");
    }

    @Test
    void archivingDuringAStormLosesNothingAndLateDuplicatesAreStillStopped() throws Exception {
        Db db = new Db(pool);
        Storm storm = new Storm(db).createOrders(80);
        String[] keys = storm.dedupKeys();
        AtomicBoolean storming = new AtomicBoolean(true);
        AtomicInteger archived = new AtomicInteger();
        CompletableFuture<Void> archiver = CompletableFuture.runAsync(() -> {
            for (int round = 0; round < 500 && storming.get(); round++) {
                archived.addAndGet(ageAndArchive(db, "payment-callback", keys));
            }
        });

        storm.deliver(4, 32, null);
        storming.set(false);
        archiver.get(60, TimeUnit.SECONDS);

        storm.assertPaidOnceWithOneGrantEvent();
        storm.assertOneCouponPerOrder();
        archived.addAndGet(ageAndArchive(db, "payment-callback", keys));
        assertTrue(archived.get() >= keys.length, "every payment's record reached the archive: " + archived.get());
        assertEquals(keys.length, db.count("SELECT count(DISTINCT key) FROM dedup_record_archive "
                + "WHERE scope = 'payment-callback' AND key = ANY($1)", (Object) keys));
        assertEquals(0, db.count("SELECT count(*) FROM dedup_record WHERE scope = 'payment-callback' AND key = ANY($1)", (Object) keys));
        String[] grants = storm.orderIds.stream().map(id -> "paid:" + id).toArray(String[]::new);
        ageAndArchive(db, "coupon-grant", grants);
        assertEquals(0, db.count("SELECT count(*) FROM dedup_record WHERE scope = 'coupon-grant' AND key = ANY($1)", (Object) grants));

        // very late duplicates: no dedup record anywhere hot, nothing in Redis
        redis.execute("FLUSHDB");
        Metrics before = Metrics.scrape();
        List<Http.Answer> late = storm.deliverOnce();
        for (Http.Answer answer : late) {
            assertEquals(200, answer.status(), answer.body());
            assertEquals(true, new JsonObject(answer.body()).getBoolean("duplicate"), answer.body());
        }
        assertEquals(keys.length, Metrics.scrape().delta(before, "idem_pipeline_duplicates_total",
                Map.of("scope", "payment-callback", "layer", "state")));
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            for (String grant : grants) {
                kafka.send("coupon-grants", null, grant, Topics.grant(grant, storm.user));
            }
            Topics.drainGrants(kafka, db, storm.user);
        }
        storm.assertPaidOnceWithOneGrantEvent();
        for (String grant : grants) {
            assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE source_key = $1", grant), grant);
        }
    }
}
