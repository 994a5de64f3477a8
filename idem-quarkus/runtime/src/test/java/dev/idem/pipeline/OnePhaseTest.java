package dev.idem.pipeline;

import static dev.idem.pipeline.PipelineRig.await;
import static dev.idem.pipeline.PipelineRig.request;
import static dev.idem.pipeline.PipelineRig.result;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.DedupCache.PreCheck;
import dev.idem.pipeline.InMemoryDedupCache.Marked;
import dev.idem.pipeline.InMemoryDatabase.Ending;
import dev.idem.pipeline.InMemoryDatabase.Stored;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One delivery through {@link IdempotencyPipeline#execute}: each layer that can answer it. */
class OnePhaseTest {

    private final PipelineRig rig = new PipelineRig();
    private final IdemRequest order = request("orders", "o-1", "sku-1", 2);

    @Test
    void theFirstDeliveryIsProcessedAndRecordedDoneAndTheCacheHearsItAfterTheCommit() {
        Outcome outcome = await(rig.pipeline.execute(order, rig.applying(order)));

        assertEquals(new Outcome.Processed(result("o-1")), outcome);
        Stored stored = rig.db.committed(order).orElseThrow();
        assertEquals(DedupRecord.Status.DONE, stored.record().status());
        assertEquals(order.fingerprint(), stored.record().fingerprint());
        assertEquals(result("o-1"), stored.record().result());
        assertEquals(PipelineRig.START.plus(Duration.ofDays(7)), stored.record().expiresAt());
        // the record and the work's change commit in one transaction
        assertEquals(1, rig.db.transactions().size());
        assertEquals(rig.db.transactions().get(0).id, stored.writtenIn());
        assertEquals(Map.of("effect:o-1", order.fingerprint()), rig.db.rows());
        assertEquals(List.of(new Marked(order, JsonText.encode(result("o-1")), true)), rig.cache.marked());
        assertEquals(1.0, rig.count("idem.pipeline.outcomes", "scope", "orders", "outcome", "PROCESSED"));

        // the next copy stops at the cache
        Outcome copy = await(rig.pipeline.execute(order, rig.applying(order)));
        assertEquals(new Outcome.Duplicate(Layer.REDIS, result("o-1")), copy);
        assertEquals(1, rig.runs("o-1"));
        assertEquals(1, rig.db.transactions().size());
    }

    @Test
    void aDuplicateAnsweredByTheCacheNeedsNoTransaction() {
        rig.cache.answer(order, new PreCheck.Done(order.fingerprint(), result("o-1")));

        Outcome outcome = await(rig.pipeline.execute(order, rig.applying(order)));

        assertEquals(new Outcome.Duplicate(Layer.REDIS, result("o-1")), outcome);
        assertEquals(0, rig.db.transactions().size());
        assertEquals(0, rig.runs("o-1"));
        assertEquals(List.of(), rig.cache.marked());
        assertEquals(1.0, rig.count("idem.pipeline.duplicates", "scope", "orders", "layer", "redis"));
    }

    @Test
    void aKeyReusedWithOtherContentIsSeenInTheCache() {
        rig.cache.answer(order, new PreCheck.Done(IdemRequest.fingerprint("sku-2", 5), result("o-1")));

        Outcome outcome = await(rig.pipeline.execute(order, rig.applying(order)));

        assertEquals(new Outcome.KeyReused(), outcome);
        assertEquals(0, rig.db.transactions().size());
        assertEquals(0, rig.runs("o-1"));
        assertEquals(1.0, rig.count("idem.pipeline.outcomes", "scope", "orders", "outcome", "KEY_REUSED"));
    }

    @Test
    void aKeyReusedWithOtherContentIsSeenInTheDatabase() {
        IdemRequest earlier = request("orders", "o-1", "sku-2", 5);
        rig.db.seed(rig.done(earlier, result("o-1")), null);
        rig.cache.answer(order, new PreCheck.Processing());

        Outcome outcome = await(rig.pipeline.execute(order, rig.applying(order)));

        assertEquals(new Outcome.KeyReused(), outcome);
        assertEquals(0, rig.runs("o-1"));
        assertEquals(Ending.ROLLED_BACK, rig.db.transactions().get(0).ending);
        assertEquals(earlier.fingerprint(), rig.db.committed(order).orElseThrow().record().fingerprint());
        assertEquals(Map.of(), rig.db.rows());
        assertEquals(List.of(), rig.cache.marked());
    }

    @Test
    void aSuspectsDuplicateIsFoundInTheDatabaseBeforeItsWorkRuns() {
        JsonObject first = new JsonObject().put("orderId", 41);
        rig.db.seed(rig.done(order, first), null);
        rig.cache.answer(order, new PreCheck.Processing());

        Outcome outcome = await(rig.pipeline.execute(order, rig.applying(order)));

        assertEquals(new Outcome.Duplicate(Layer.DB, first), outcome);
        assertEquals(0, rig.runs("o-1"));
        assertEquals(Ending.ROLLED_BACK, rig.db.transactions().get(0).ending);
        assertEquals(Map.of(), rig.db.rows());
        // the cache is refreshed, so that the next copy stops there
        assertEquals(List.of(new Marked(order, JsonText.encode(first), true)), rig.cache.marked());
        assertEquals(1.0, rig.count("idem.pipeline.duplicates", "scope", "orders", "layer", "db"));
    }

    @Test
    void aRecordTheCacheDidNotKnowOfMakesTheClaimedDeliveryADuplicateAndItsWorkRollsBack() {
        // the cache lost the key (flushed, expired): it claims it for a copy whose record exists
        JsonObject first = new JsonObject().put("orderId", 41);
        rig.db.seed(rig.done(order, first), null);

        Outcome outcome = await(rig.pipeline.execute(order, rig.applying(order)));

        assertEquals(new Outcome.Duplicate(Layer.DB, first), outcome);
        assertEquals(1, rig.runs("o-1"));
        assertEquals(Map.of(), rig.db.rows());
        assertEquals(InMemoryDatabase.ANOTHER, rig.db.committed(order).orElseThrow().writtenIn());
        assertEquals(List.of(new Marked(order, JsonText.encode(first), true)), rig.cache.marked());
    }

    @Test
    void whenTheCacheIsDownOrSlowTheStoreDecidesAndStillCatchesTheDuplicate() {
        rig.cache.goDown();

        Outcome first = await(rig.pipeline.execute(order, rig.applying(order)));
        Outcome copy = await(rig.pipeline.execute(order, rig.applying(order)));

        assertEquals(new Outcome.Processed(result("o-1")), first);
        assertEquals(new Outcome.Duplicate(Layer.DB, result("o-1")), copy);
        assertEquals(1, rig.runs("o-1"));
        assertEquals(Map.of("effect:o-1", order.fingerprint()), rig.db.rows());
        assertEquals(2, rig.db.transactions().size());
    }

    @Test
    void aLockWaitPastTheConcurrentWaitIsInFlight() {
        PipelineRig bounded = new PipelineRig(Map.of(
                "idem.pipeline.scopes.orders.concurrent-wait", "250ms",
                "idem.pipeline.in-flight-retry-after", "3s"));
        bounded.faults.lockedByAnother("orders", "o-1");

        Outcome outcome = await(bounded.pipeline.execute(order, bounded.applying(order)));

        assertEquals(new Outcome.InFlight(Duration.ofSeconds(3)), outcome);
        assertTrue(bounded.db.committed(order).isEmpty());
        assertEquals(Map.of(), bounded.db.rows());
        assertEquals(List.of(), bounded.cache.marked());
        assertEquals(1.0, bounded.count("idem.pipeline.outcomes", "scope", "orders", "outcome", "IN_FLIGHT"));
    }

    @Test
    void aStoreOutageFailsTheDelivery() {
        rig.faults.goDown();

        assertEquals(DedupStore.Failure.UNAVAILABLE, rig.store.classify(assertThrows(PgException.class,
                () -> await(rig.pipeline.execute(order, rig.applying(order))))));
        assertEquals(List.of(), rig.cache.marked());
        assertEquals(0.0, rig.count("idem.pipeline.outcomes"));
    }
}
