package dev.idem.extension.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.pipeline.DedupAdmin;
import dev.idem.pipeline.DedupAdmin.RedriveReport;
import dev.idem.pipeline.IdemRequest;
import dev.idem.pipeline.TwoPhaseScope;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Transaction;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Recovery of a hanging two-phase record (PROCESSING past its lease: its holder died) while another
 * instance takes the same record over: each record goes to one of them, by the compare-and-set on
 * its lease in Postgres, and the one that lost the race neither runs the effect nor touches the row.
 */
@QuarkusTest
class RecoveryRaceTest {

    static final Duration BOUND = Duration.ofSeconds(30);

    @Inject
    Pool pool;

    @Inject
    DedupAdmin admin;

    @Inject
    Scheduler scheduler;

    @Inject
    @TwoPhaseScope(Payouts.SCOPE)
    Payouts payouts;

    @Inject
    MeterRegistry registry;

    Db db;
    Counters counters;
    final List<String> keys = new ArrayList<>();

    /** The recovery job waits, so that only the test's own runs take records over. */
    @BeforeEach
    void setUp() {
        db = new Db(pool);
        counters = new Counters(registry);
        scheduler.pause(DedupAdmin.RECOVERY_JOB);
        drainHanging();
    }

    @AfterEach
    void tearDown() {
        scheduler.resume(DedupAdmin.RECOVERY_JOB);
        db.rows("DELETE FROM dedup_record WHERE scope = $1 AND key = ANY($2)", Payouts.SCOPE,
                keys.toArray(String[]::new));
    }

    @Test
    void recoveryRacingAnotherInstanceForAHangingRecordLeavesItToThatInstance() throws Exception {
        String key = "raced-" + UUID.randomUUID();
        String account = "payout-" + key;
        insertHanging(key, account);
        double takeovers = takeovers();

        // the other instance takes the record over first; its row lock holds until it commits
        OffsetDateTime othersLease;
        CompletableFuture<RedriveReport> redrive;
        SqlConnection other = pool.getConnection().await().atMost(BOUND);
        try {
            Transaction tx = other.begin().await().atMost(BOUND);
            int otherPid = other.query("SELECT pg_backend_pid()").execute().await().atMost(BOUND)
                    .iterator().next().getInteger(0);
            othersLease = other.preparedQuery("""
                            UPDATE dedup_record SET attempts = attempts + 1,
                                   lease_until = clock_timestamp() + interval '1 second', updated_at = clock_timestamp()
                            WHERE scope = $1 AND key = $2 RETURNING lease_until""")
                    .execute(Tuple.of(Payouts.SCOPE, key)).await().atMost(BOUND)
                    .iterator().next().getOffsetDateTime("lease_until");

            // recovery reads the record as hanging, then its takeover waits for the other's lock
            redrive = admin.redriveHanging().subscribeAsCompletionStage();
            Awaitility.await().atMost(BOUND).pollInterval(Duration.ofMillis(20)).until(() -> db.count(
                    "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", otherPid) == 1);
            tx.commit().await().atMost(BOUND);
        } finally {
            other.close().await().atMost(BOUND);
        }

        assertEquals(new RedriveReport(1, 0, 0, 0), redrive.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        Row raced = record(key);
        assertEquals("PROCESSING", raced.getString("status"));
        assertEquals(2, raced.getInteger("attempts"));
        assertEquals(othersLease.toInstant(), raced.getOffsetDateTime("lease_until").toInstant());
        assertEquals(0, payouts.transfers(key));
        assertEquals(0, db.entries(account));
        assertEquals(takeovers, takeovers());

        // the other instance dies too: once its lease has passed, recovery completes the record, once
        Awaitility.await().atMost(BOUND).pollInterval(Duration.ofMillis(100)).until(() -> db.count(
                "SELECT count(*) FROM dedup_record WHERE scope = $1 AND key = $2 AND lease_until < clock_timestamp()",
                Payouts.SCOPE, key) == 1);
        assertEquals(new RedriveReport(1, 1, 1, 0), redrive());
        Row done = record(key);
        assertEquals("DONE", done.getString("status"));
        assertEquals(3, done.getInteger("attempts"));
        assertEquals(1, payouts.transfers(key));
        assertEquals(1, db.entries(account));
        assertEquals(takeovers + 1, takeovers());
    }

    /** What an instance that claimed the key and died before confirming leaves behind. */
    void insertHanging(String key, String account) {
        keys.add(key);
        JsonObject payload = new JsonObject().put("account", account).put("amount", 100);
        db.rows("""
                INSERT INTO dedup_record (scope, key, fingerprint, status, attempts, lease_until, created_at, updated_at,
                                          expires_at, payload)
                VALUES ($1, $2, $3, 'PROCESSING', 1, now() - interval '1 minute', now() - interval '2 minutes',
                        now() - interval '2 minutes', now() + interval '7 days', $4)""",
                Payouts.SCOPE, key, IdemRequest.fingerprint(account, 100), payload);
    }

    Row record(String key) {
        List<Row> rows = db.rows("SELECT status, attempts, lease_until FROM dedup_record WHERE scope = $1 AND key = $2",
                Payouts.SCOPE, key);
        assertEquals(1, rows.size(), key);
        return rows.get(0);
    }

    double takeovers() {
        return counters.count("idem.dedup.takeovers", "scope", Payouts.SCOPE);
    }

    RedriveReport redrive() {
        return admin.redriveHanging().await().atMost(BOUND);
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
}
