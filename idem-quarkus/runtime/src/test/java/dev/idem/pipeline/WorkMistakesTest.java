package dev.idem.pipeline;

import static dev.idem.pipeline.PipelineRig.await;
import static dev.idem.pipeline.PipelineRig.request;
import static dev.idem.pipeline.PipelineRig.result;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.OnePhase.Pending;
import dev.idem.pipeline.CacheFirst.Settled;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What a newcomer's work does naturally, and what the pipeline makes of it: a refusal after
 * writing, an effect with no statement behind it, a throw, a null, a slow work, a work that
 * tries to run the transaction itself.
 */
class WorkMistakesTest {

    private final PipelineRig rig = new PipelineRig();
    private final IdemRequest a = request("redeem", "a-1", "x");
    private final IdemRequest b = request("redeem", "b-1", "y");

    @Test
    void aWorkThatWritesAndThenRefusesLeavesOnlyItsRefusalEvenInASharedTransaction() {
        AtomicInteger runs = new AtomicInteger();
        Work writesThenRefuses = tx -> {
            runs.incrementAndGet();
            return rig.db.write(tx, "effect:b-1", "half-done")
                    .replaceWith(new Effect.Rejected("INSUFFICIENT_BALANCE", "the card holds less"));
        };

        List<Settled> settled = await(rig.protocol.transact(List.of(
                new Pending(a, rig.applying(a), false), new Pending(b, writesThenRefuses, false))));

        assertInstanceOf(Outcome.Processed.class, assertInstanceOf(Settled.Decided.class, settled.get(0)).outcome());
        assertEquals("INSUFFICIENT_BALANCE", assertInstanceOf(Outcome.Rejected.class,
                assertInstanceOf(Settled.Decided.class, settled.get(1)).outcome()).reason());
        // its write rolled back with the first transaction; the second recorded its refusal without running it again
        assertEquals(Map.of("effect:a-1", a.fingerprint()), rig.db.rows());
        assertEquals(Set.of(DedupStore.batchKey(a), DedupStore.batchKey(b)), rig.db.committedRecords().keySet());
        assertEquals(1, runs.get());
        assertEquals(2, rig.db.transactions().size());
        assertEquals(1.0, rig.count("idem.pipeline.group.retries", "reason", "refused"));
    }

    @Test
    void aRefusalForNowAfterWritingKeepsNothingAndTheOthersCommitWithoutIt() {
        Work writesThenRefusesForNow = tx -> rig.db.write(tx, "effect:b-1", "half-done")
                .replaceWith(Effect.Rejected.forNow("CARD_NOT_FOUND", "no card yet"));

        List<Settled> settled = await(rig.protocol.transact(List.of(
                new Pending(a, rig.applying(a), false), new Pending(b, writesThenRefusesForNow, false))));

        assertInstanceOf(Outcome.Processed.class, assertInstanceOf(Settled.Decided.class, settled.get(0)).outcome());
        assertEquals(new Outcome.Rejected("CARD_NOT_FOUND", "no card yet"),
                assertInstanceOf(Settled.Decided.class, settled.get(1)).outcome());
        assertEquals(Map.of("effect:a-1", a.fingerprint()), rig.db.rows());
        assertEquals(Set.of(DedupStore.batchKey(a)), rig.db.committedRecords().keySet());
        assertEquals(2, rig.db.transactions().size());

        // alone, the one transaction is rolled back and that is all
        PipelineRig alone = new PipelineRig();
        Work refusesAlone = tx -> alone.db.write(tx, "effect:b-1", "half-done")
                .replaceWith(Effect.Rejected.forNow("CARD_NOT_FOUND", "no card yet"));
        await(alone.protocol.transact(List.of(new Pending(b, refusesAlone, false))));
        assertEquals(1, alone.db.transactions().size());
        assertTrue(alone.db.rows().isEmpty());
    }

    @Test
    void aWorkThatRefusesWithoutWritingKeepsTheGroupsTransaction() {
        List<Settled> settled = await(rig.protocol.transact(List.of(new Pending(a, rig.applying(a), false),
                new Pending(b, rig.work(b, new Effect.Rejected("NOT_YET", "come back later")), false))));

        assertInstanceOf(Outcome.Rejected.class, ((Settled.Decided) settled.get(1)).outcome());
        assertEquals(1, rig.db.transactions().size());
        assertEquals(0.0, rig.count("idem.pipeline.group.retries"));
    }

    @Test
    void anEffectWithNoStatementThroughTheGivenConnectionIsCountedAsAMistake() {
        Work elsewhere = tx -> Uni.createFrom().item(new Effect.Processed(result("a-1")));

        assertEquals(new Outcome.Processed(result("a-1")), await(rig.pipeline.execute(a, elsewhere)));
        await(rig.pipeline.execute(b, elsewhere));

        assertEquals(2.0, rig.count("idem.pipeline.mistakes", "scope", "redeem", "kind", "no-statement"));
        // a work that writes through its connection is no mistake
        IdemRequest c = request("redeem", "c-1", "z");
        await(rig.pipeline.execute(c, rig.applying(c)));
        assertEquals(2.0, rig.count("idem.pipeline.mistakes"));
    }

    @Test
    void aWorkThatThrowsInsteadOfFailingItsUniFailsTheDeliveryAndKeepsNoRecord() {
        IllegalArgumentException bug = new IllegalArgumentException("card id missing");
        Work throwing = tx -> {
            throw bug;
        };

        assertEquals(bug, assertThrows(IllegalArgumentException.class, () -> await(rig.pipeline.execute(a, throwing))));
        assertTrue(rig.db.committed(a).isEmpty());
        // the key is free again: a fixed work goes through
        assertInstanceOf(Outcome.Processed.class, await(rig.pipeline.execute(a, rig.applying(a))));
    }

    @Test
    void aWorkThatAnswersNullFailsTheDeliveryWithAMessageSayingSo() {
        NullPointerException nullUni = assertThrows(NullPointerException.class,
                () -> await(rig.pipeline.execute(a, tx -> null)));
        assertTrue(nullUni.getMessage().contains("the work answered null"), nullUni.getMessage());

        NullPointerException nullEffect = assertThrows(NullPointerException.class,
                () -> await(rig.pipeline.execute(a, tx -> Uni.createFrom().nullItem())));
        assertTrue(nullEffect.getMessage().contains("not an Effect"), nullEffect.getMessage());
        assertTrue(rig.db.committed(a).isEmpty());
    }

    @Test
    void aWorkThatBeginsOrClosesTheTransactionItselfIsRefusedWithWhy() {
        IllegalStateException began = assertThrows(IllegalStateException.class,
                () -> await(rig.pipeline.execute(a, tx -> tx.begin().replaceWith(new Effect.Processed(result("a-1"))))));
        assertTrue(began.getMessage().contains("belong to the idempotency pipeline"), began.getMessage());

        assertThrows(IllegalStateException.class,
                () -> await(rig.pipeline.execute(a, tx -> tx.close().replaceWith(new Effect.Processed(result("a-1"))))));
        assertTrue(rig.db.committed(a).isEmpty());
    }

    @Test
    void aSlowWorkIsCountedAndStillApplied() {
        PipelineRig quick = new PipelineRig(Map.of("idem.pipeline.slow-work", "20ms"));
        Work slow = tx -> quick.db.write(tx, "effect:a-1", "slow")
                .onItem().delayIt().by(Duration.ofMillis(200))
                .replaceWith(new Effect.Processed(new JsonObject().put("slow", true)));

        assertInstanceOf(Outcome.Processed.class, await(quick.pipeline.execute(a, slow)));

        assertEquals(1.0, quick.count("idem.pipeline.mistakes", "scope", "redeem", "kind", "slow"));
    }
}
