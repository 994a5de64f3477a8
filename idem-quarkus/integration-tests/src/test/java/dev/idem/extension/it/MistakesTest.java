package dev.idem.extension.it;

import static dev.idem.extension.it.Http.PROBLEM;
import static dev.idem.extension.it.Http.REPLAYED;
import static dev.idem.extension.it.Http.entry;
import static dev.idem.extension.it.Http.post;
import static dev.idem.extension.it.Http.posting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.pipeline.KafkaTestClient.ReadRecord;
import dev.idem.pipeline.PipelineConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A newcomer's natural mistakes in a work, and what each does now. (That an @Idempotent method
 * without a SqlConnection, or not returning a Uni, stops the build is the deployment module's
 * tests' to show.)
 */
@QuarkusTest
class MistakesTest {

    @Inject
    Pool pool;

    @Inject
    PipelineConfig config;

    @Inject
    MeterRegistry registry;

    @Inject
    Bug bug;

    Db db;
    Counters counters;
    String caller;

    @BeforeEach
    void setUp() {
        db = new Db(pool);
        counters = new Counters(registry);
        caller = "caller-" + UUID.randomUUID();
    }

    @AfterEach
    void tearDown() {
        bug.fix();
    }

    /**
     * The work throws: its exception reaches the application's exception mapping, what it wrote
     * rolls back, no record is kept, and the same key works once the bug is fixed.
     */
    @Test
    void aRestWorkThatThrowsReachesTheExceptionMappingAndLeavesItsKeyFree() {
        String account = "throwing-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        bug.introduce();

        Response failed = post("/mistakes/throwing", caller, key, entry(account, 10));
        failed.then().statusCode(500).contentType(PROBLEM);
        assertEquals("BROKEN", failed.jsonPath().getString("code"), "the application's own mapping answered");
        assertEquals(0, db.entries(account), "what the work wrote rolled back");
        assertEquals(0, db.records("mistake-throwing", caller + ":" + key), "nothing was recorded");

        bug.fix();
        Response fixed = post("/mistakes/throwing", caller, key, entry(account, 10));
        fixed.then().statusCode(201);
        assertNull(fixed.header(REPLAYED), "the failure was not kept as the key's answer");
        post("/mistakes/throwing", caller, key, entry(account, 10)).then().statusCode(201).header(REPLAYED, "true");
        assertEquals(1, db.entries(account));
        assertEquals(1, db.records("mistake-throwing", caller + ":" + key));
    }

    /**
     * A Kafka work that always throws: tried idem.pipeline.work-attempts times, then dead-lettered
     * with WORK_FAILED, and the partition goes on with the next record.
     */
    @Test
    void aKafkaWorkThatAlwaysThrowsIsDeadLetteredAfterItsAttemptsAndThePartitionGoesOn() {
        Channel channel = Channel.of("failing-postings");
        String run = "failing-" + UUID.randomUUID();
        String broken = run + "-broken";
        String good = run + "-good";
        double retries = new Counters(registry).retries(channel.name());
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            kafka.send(channel.topic(), 2, broken, posting(broken, "broken-" + run, 5));
            channel.awaitSettled(kafka.send(channel.topic(), 2, good, posting(good, "account-" + run, 5)));

            assertEquals(1, db.count("SELECT count(*) FROM ledger WHERE ref = $1", good), "the later record was applied");
            assertEquals(0, db.count("SELECT count(*) FROM ledger WHERE ref = $1", broken));
            List<ReadRecord> dead = channel.deadLetters(kafka, run);
            assertEquals(1, dead.size(), dead.toString());
            assertEquals(broken, dead.get(0).key());
            assertTrue(dead.get(0).reason().startsWith("WORK_FAILED"), dead.get(0).reason());
            assertTrue(dead.get(0).reason().contains("the work cannot post to broken-" + run), dead.get(0).reason());
        }
        assertEquals(config.workAttempts() - 1, counters.retries(channel.name()) - retries,
                "tried idem.pipeline.work-attempts times in all");
    }

    /** The work writes through the injected Pool instead of tx: the pipeline counts the mistake. */
    @Test
    void aWorkThatWritesThroughThePoolIsCountedAsAMistake() {
        String account = "pool-writer-" + UUID.randomUUID();
        double before = mistakes("mistake-pool-writer");

        post("/mistakes/pool-writer", caller, UUID.randomUUID().toString(), entry(account, 10)).then().statusCode(201);

        assertEquals(1, mistakes("mistake-pool-writer") - before, "idem_pipeline_mistakes_total{kind=\"no-statement\"}");
        assertEquals(1, db.entries(account), "written outside the transaction, so not rolled back with it");
    }

    private double mistakes(String scope) {
        return counters.count("idem.pipeline.mistakes", "scope", scope, "kind", "no-statement");
    }
}
