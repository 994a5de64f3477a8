package dev.idem.coupons;

import static dev.idem.pipeline.SqlTime.ts;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.DedupAdmin;
import dev.idem.pipeline.IdemRequest;
import dev.idem.pipeline.KafkaTestClient;
import dev.idem.pipeline.Outcome;
import dev.idem.pipeline.PipelineConfig;
import dev.idem.testing.Db;
import dev.idem.testing.FakeCouponIssuer;
import dev.idem.testing.FakeCouponIssuer.Mode;
import dev.idem.testing.Metrics;
import dev.idem.testing.MovableClock;
import dev.idem.testing.Topics;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Coupons issued by an external HTTP service, through the pipeline's two-phase mode: the record
 * is committed PROCESSING under a lease, the issuer is called with the key, the record is
 * confirmed DONE with the local coupon row. The issuer is a real HTTP server that hangs, fails or
 * succeeds on demand; time is a clock the test moves, so leases expire without waiting for them.
 */
@QuarkusTest
@TestProfile(ExternalIssuerTwoPhaseTest.ExternalIssuer.class)
class ExternalIssuerTwoPhaseTest {

    public static class ExternalIssuer implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "idem.campaign.paid-coupon-issuer", "external",
                    "idem.coupon-issuer.timeout", "30s",
                    // leases and retry delays are read from the movable clock: they pass when the test says so
                    "idem.pipeline.lease", "10m",
                    "idem.pipeline.retry-delay", "1m",
                    "idem.pipeline.max-attempts", "5",
                    "idem.pipeline.recovery-interval", "1s");
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(MovableClock.class);
        }

        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(FakeCouponIssuer.Resource.class),
                    new TestResourceEntry(GrantsTopic.class));
        }
    }

    /**
     * The grant consumer reads a topic and a consumer group of this test's own, so that what
     * other instances and benchmarks put on coupon-grants neither queues ahead of the test's
     * records nor takes them away. Same channel, same consumer code: only the topic differs.
     */
    public static class GrantsTopic implements QuarkusTestResourceLifecycleManager {
        static final String TOPIC = "coupon-grants-external-issuer-test";

        @Override
        public Map<String, String> start() {
            Properties props = new Properties();
            props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, ConfigProvider.getConfig()
                    .getOptionalValue("kafka.bootstrap.servers", String.class).orElse("127.0.0.1:9092"));
            try (Admin admin = Admin.create(props)) {
                if (!admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(TOPIC)) {
                    admin.createTopics(List.of(new NewTopic(TOPIC, Topics.PARTITIONS, (short) 1))).all()
                            .get(30, TimeUnit.SECONDS);
                }
            } catch (Exception e) {
                throw new IllegalStateException("could not create " + TOPIC, e);
            }
            return Map.of(
                    "mp.messaging.incoming.coupon-grants.topic", TOPIC,
                    "mp.messaging.incoming.coupon-grants.group.id", "idem-coupon-grants-external-issuer-test");
        }

        @Override
        public void stop() {
            // the topic stays: the next run's consumer group continues where this one committed
        }
    }

    static final String TEMPLATE = "PAY-5OFF";
    static final Map<String, String> SCOPE = Map.of("scope", CouponService.SCOPE);

    @Inject
    Pool pool;

    @Inject
    MovableClock clock;

    @Inject
    CouponService coupons;

    @Inject
    DedupAdmin hanging;

    @Inject
    PipelineConfig twoPhase;

    @Inject
    Scheduler scheduler;

    Db db;
    FakeCouponIssuer issuer;
    String user;
    final List<String> keys = new ArrayList<>();

    @BeforeEach
    void setUp() {
        db = new Db(pool);
        issuer = FakeCouponIssuer.Resource.issuer();
        issuer.reset();
        user = "two-phase-" + UUID.randomUUID();
    }

    /** Unfinished records of these tests would otherwise stay for reconciliation to find. */
    @AfterEach
    void tearDown() {
        issuer.reset();
        scheduler.resume(DedupAdmin.RECOVERY_JOB);
        db.rows("DELETE FROM dedup_record WHERE scope = $1 AND key = ANY($2) AND status <> 'DONE'",
                CouponService.SCOPE, keys.toArray(String[]::new));
    }

    @Test
    void anIssuerHangingBetweenClaimAndConfirmIsTakenOverAfterTheLeaseAndIssuesOnce() {
        String key = key("hang");
        issuer.mode(key, Mode.HANG);
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            kafka.send(GrantsTopic.TOPIC, null, key, Topics.grant(key, user));

            // the issuer issued but holds its answer: the record hangs, PROCESSING under its lease
            await().until(() -> issuer.calls(key) == 1);
            assertEquals("PROCESSING", status(key));
            assertEquals(1, attempts(key));
            // a duplicate meanwhile is in flight, and does not call the issuer
            assertInstanceOf(Outcome.InFlight.class, grantNow(key));
            assertEquals(1, issuer.calls(key));

            Metrics before = Metrics.scrape();
            issuer.mode(key, Mode.SUCCEED);
            clock.advance(twoPhase.lease().plusSeconds(1));

            // recovery takes it over and asks again with the same key: the issuer answers the same coupon
            await().until(() -> "DONE".equals(status(key)));
            assertEquals(2, attempts(key));
            assertEquals(2, issuer.calls(key));
            assertEquals(1, issuer.issues(key));
            assertEquals(1, couponsOf(key));
            assertEquals(issuer.couponId(key), db.string("SELECT id FROM coupons WHERE source_key = $1", key));
            assertTrue(Metrics.scrape().delta(before, "idem_dedup_takeovers_total", SCOPE) >= 1);

            // the hung answer arrives at last; its confirmation holds an old lease and changes nothing
            issuer.releaseHung();
            drainGrants(kafka);
            assertEquals(1, couponsOf(key));
            assertEquals(1, issuer.issues(key));
            assertEquals("DONE", status(key));
            assertEquals(2, attempts(key));
        }
        assertInstanceOf(Outcome.Duplicate.class, grantNow(key));
        assertEquals(2, issuer.calls(key));
    }

    @Test
    void aProcessKilledBetweenClaimAndConfirmIsCompletedOnceByRecovery() {
        String key = key("killed");
        // the dead process had claimed the key and reached the issuer, and died before confirming
        String issuedBeforeTheCrash = issuer.issueWithoutCall(key);
        insertProcessing(key, 1, clock.instant().minusSeconds(60));

        await().until(() -> "DONE".equals(status(key)));
        assertEquals(2, attempts(key));
        assertEquals(1, issuer.calls(key));
        assertEquals(1, issuer.issues(key));
        assertEquals(1, couponsOf(key));
        assertEquals(issuedBeforeTheCrash, db.string("SELECT id FROM coupons WHERE source_key = $1", key));
        assertNull(db.string("SELECT payload::text FROM dedup_record WHERE scope = $1 AND key = $2",
                CouponService.SCOPE, key), "a DONE record no longer carries what to do");

        // a late redelivery is a duplicate: no call, no second coupon
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            kafka.send(GrantsTopic.TOPIC, null, key, Topics.grant(key, user));
            drainGrants(kafka);
        }
        assertEquals(1, couponsOf(key));
        assertEquals(1, issuer.calls(key));
    }

    @Test
    void anIssuerFailingForGoodEndsFailedAfterMaxAttemptsUntilAnOperatorRedrivesIt() {
        scheduler.pause(DedupAdmin.RECOVERY_JOB);
        drainHanging();
        String key = key("failing");
        issuer.mode(key, Mode.FAIL);
        Metrics before = Metrics.scrape();

        // the first attempt fails: still PROCESSING, to be tried again after the retry delay
        assertInstanceOf(Outcome.InFlight.class, grantNow(key));
        assertEquals("PROCESSING", status(key));
        assertEquals(1, attempts(key));
        assertTrue(lastError(key).contains("503"), lastError(key));
        // within the retry delay a duplicate is in flight and nothing is retried
        assertInstanceOf(Outcome.InFlight.class, grantNow(key));
        redrive();
        assertEquals(1, attempts(key));
        assertEquals(1, issuer.calls(key));

        int max = twoPhase.maxAttempts();
        for (int attempt = 2; attempt <= max; attempt++) {
            clock.advance(twoPhase.retryDelay().plusSeconds(1));
            redrive();
            assertEquals(attempt, attempts(key));
            assertEquals(attempt, issuer.calls(key));
            assertEquals(attempt < max ? "PROCESSING" : "FAILED", status(key));
        }

        assertEquals("FAILED", status(key));
        assertEquals(max, attempts(key));
        assertTrue(lastError(key).contains("503"), lastError(key));
        assertEquals(0, issuer.issues(key));
        assertEquals(0, couponsOf(key));
        assertEquals(1, db.count("SELECT count(*) FROM dedup_record WHERE scope = $1 AND key = $2 AND status = 'FAILED'"
                + " AND result IS NULL AND payload IS NOT NULL", CouponService.SCOPE, key));
        assertTrue(Metrics.scrape().delta(before, "idem_dedup_failed_total", SCOPE) >= 1);
        assertTrue(Metrics.scrape().delta(before, "idem_dedup_takeovers_total", SCOPE) >= max - 1);
        String createdAt = db.string("SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') "
                + "FROM dedup_record WHERE scope = $1 AND key = $2", CouponService.SCOPE, key);
        given().header("X-Admin-Token", "test-admin-token").get("/admin/reconciliation?since=" + createdAt).then()
                .statusCode(200)
                .body("healthy", equalTo(false))
                .body("checks.failedDedupRecords.count", greaterThanOrEqualTo(1))
                .body("checks.failedDedupRecords.samples", hasItem(CouponService.SCOPE + ":" + key));

        // FAILED is final: however late, nothing runs again, and a duplicate is refused
        clock.advance(twoPhase.lease().multipliedBy(2));
        redrive();
        Outcome duplicate = grantNow(key);
        assertInstanceOf(Outcome.Rejected.class, duplicate);
        assertEquals("FAILED", ((Outcome.Rejected) duplicate).reason());
        assertEquals(max, issuer.calls(key));
        assertEquals(max, attempts(key));
        assertEquals(0, couponsOf(key));

        // until an operator, the cause fixed, re-drives it: its attempts anew, and the coupon issued once
        issuer.mode(key, Mode.SUCCEED);
        String failedRecord = "/admin/dedup/" + CouponService.SCOPE + "/" + key + "/redrive";
        given().header("X-Admin-Token", "test-admin-token").post(failedRecord).then()
                .statusCode(200).body("result", equalTo("DONE"));
        assertEquals("DONE", status(key));
        assertEquals(1, attempts(key));
        assertEquals(1, issuer.issues(key));
        assertEquals(1, couponsOf(key));
        given().header("X-Admin-Token", "test-admin-token").post(failedRecord).then()
                .statusCode(404).body("code", equalTo("FAILED_RECORD_NOT_FOUND"));
        assertEquals(max + 1, issuer.calls(key));
    }

    @Test
    void aRedriveAnswersWhatItExaminedTookOverDidAndFailed() {
        scheduler.pause(DedupAdmin.RECOVERY_JOB);
        drainHanging();
        int max = twoPhase.maxAttempts();
        Instant expired = clock.instant().minusSeconds(60);

        String succeeds = key("redrive-succeeds");
        insertProcessing(succeeds, 1, expired);
        String exhausted = key("redrive-exhausted");
        insertProcessing(exhausted, max, expired);
        String lastTry = key("redrive-last-try");
        issuer.mode(lastTry, Mode.FAIL);
        insertProcessing(lastTry, max - 1, expired);
        String failsAgain = key("redrive-fails-again");
        issuer.mode(failsAgain, Mode.FAIL);
        insertProcessing(failsAgain, 1, expired);
        String withinLease = key("redrive-within-lease");
        insertProcessing(withinLease, 1, clock.instant().plusSeconds(300));

        DedupAdmin.RedriveReport report = redrive();

        assertEquals(new DedupAdmin.RedriveReport(4, 3, 1, 2), report, report.toJson().encode());
        assertEquals("DONE", status(succeeds));
        assertEquals(1, couponsOf(succeeds));
        assertEquals("FAILED", status(exhausted));
        assertEquals(0, issuer.calls(exhausted), "a record out of attempts is not run again");
        assertEquals("FAILED", status(lastTry));
        assertEquals(max, attempts(lastTry));
        assertEquals("PROCESSING", status(failsAgain));
        assertEquals(2, attempts(failsAgain));
        assertEquals("PROCESSING", status(withinLease));
        assertEquals(1, attempts(withinLease));
        assertEquals(0, issuer.calls(withinLease));

        // nothing is hanging any more: the failed retry waits for its delay, the lease still holds
        assertEquals(new DedupAdmin.RedriveReport(0, 0, 0, 0), redrive());
    }

    // --- helpers -------------------------------------------------------------------------------

    String key(String what) {
        String key = what + ":" + UUID.randomUUID();
        keys.add(key);
        return key;
    }

    CouponGrant grant(String key) {
        return new CouponGrant(key, user, TEMPLATE, null);
    }

    Outcome grantNow(String key) {
        return coupons.grant(grant(key)).await().atMost(Duration.ofSeconds(30));
    }

    DedupAdmin.RedriveReport redrive() {
        return hanging.redriveHanging().await().atMost(Duration.ofSeconds(60));
    }

    /**
     * A last grant on every partition of the test's topic: once each has its coupon, everything
     * sent there before has been consumed, since a partition is consumed in order.
     */
    void drainGrants(KafkaTestClient kafka) {
        for (int partition = 0; partition < Topics.PARTITIONS; partition++) {
            String bizKey = "sentinel-" + UUID.randomUUID();
            kafka.send(GrantsTopic.TOPIC, partition, bizKey, Topics.grant(bizKey, user + "-sentinel"));
            Topics.awaitCoupon(db, bizKey);
        }
    }

    /** Recovery until nothing hangs, so that a report counts this test's records alone. */
    void drainHanging() {
        for (int round = 0; round < 10; round++) {
            if (redrive().examined() == 0) {
                return;
            }
        }
        throw new AssertionError("hanging records keep coming back");
    }

    /** What a process that claimed the key and then died leaves behind. */
    void insertProcessing(String key, int attempts, Instant leaseUntil) {
        IdemRequest request = grant(key).idemRequest(CouponService.SCOPE);
        Instant now = clock.instant();
        JsonObject payload = new JsonObject().put("bizKey", key).put("userId", user).put("templateId", TEMPLATE)
                .putNull("orderId");
        db.rows("""
                INSERT INTO dedup_record (scope, key, fingerprint, status, attempts, lease_until, created_at, updated_at,
                                          expires_at, payload)
                VALUES ($1, $2, $3, 'PROCESSING', $4, $5, $6, $6, $7, $8)""",
                request.scope(), request.key(), request.fingerprint(), attempts, ts(leaseUntil),
                ts(now.minus(twoPhase.lease())), ts(now.plus(Duration.ofDays(7))), payload);
    }

    Row record(String key) {
        List<Row> rows = db.rows("SELECT status, attempts, last_error FROM dedup_record WHERE scope = $1 AND key = $2",
                CouponService.SCOPE, key);
        assertEquals(1, rows.size(), key);
        return rows.get(0);
    }

    String status(String key) {
        return record(key).getString("status");
    }

    int attempts(String key) {
        return record(key).getInteger("attempts");
    }

    String lastError(String key) {
        String error = record(key).getString("last_error");
        assertNotNull(error, key);
        return error;
    }

    long couponsOf(String key) {
        return db.count("SELECT count(*) FROM coupons WHERE source_key = $1", key);
    }

    static ConditionFactory await() {
        return Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100));
    }
}
