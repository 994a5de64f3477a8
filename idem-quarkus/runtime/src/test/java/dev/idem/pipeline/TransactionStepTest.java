package dev.idem.pipeline;

import static dev.idem.pipeline.PipelineRig.await;
import static dev.idem.pipeline.PipelineRig.request;
import static dev.idem.pipeline.PipelineRig.result;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.DedupCache.PreCheck;
import dev.idem.pipeline.OnePhase.Pending;
import dev.idem.pipeline.CacheFirst.Settled;
import dev.idem.pipeline.InMemoryDedupCache.Marked;
import dev.idem.pipeline.InMemoryDatabase.Ending;
import dev.idem.pipeline.InMemoryDatabase.Tx;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Deliveries that share one transaction (a Kafka poll through {@link IdempotencyPipeline#executeAll},
 * or {@link OnePhase#transact} directly): each gets the outcome it would have had alone.
 */
class TransactionStepTest {

    private final IdemRequest a = request("orders", "a-1", "x");
    private final IdemRequest b = request("orders", "b-1", "y");
    private final IdemRequest c = request("orders", "c-1", "z");

    @Test
    void aConcurrentWinnersKeyIsADuplicateWithItsResultAndTheRestOfTheGroupRunsAgain() {
        PipelineRig rig = new PipelineRig();
        JsonObject winners = new JsonObject().put("by", "the other delivery");
        rig.faults.commitsMeanwhile(rig.done(b, winners));

        List<Outcome> outcomes = await(rig.pipeline.executeAll(List.of(item(rig, a), item(rig, b), item(rig, c))));

        assertEquals(List.of(
                new Outcome.Processed(result("a-1")),
                new Outcome.Duplicate(Layer.DB, winners),
                new Outcome.Processed(result("c-1"))), outcomes);
        List<Tx> txs = rig.db.transactions();
        assertEquals(2, txs.size());
        // the records went with the COMMIT, b's met the winner's row: nothing committed
        assertEquals(Ending.ROLLED_BACK, txs.get(0).ending);
        assertEquals(Set.of(key(a), key(b), key(c)), txs.get(0).touched);
        // then every row is looked up first: b's is found, a and c run again and commit
        assertEquals(Ending.COMMITTED, txs.get(1).ending);
        assertEquals(Set.of(key(a), key(b), key(c)), txs.get(1).touched);
        assertEquals(txs.get(1).id, rig.db.committed(a).orElseThrow().writtenIn());
        assertEquals(txs.get(1).id, rig.db.committed(c).orElseThrow().writtenIn());
        assertEquals(InMemoryDatabase.ANOTHER, rig.db.committed(b).orElseThrow().writtenIn());
        // b's work ran in the first transaction only, which rolled back
        assertEquals(1, rig.runs("b-1"));
        assertEquals(Map.of("effect:a-1", a.fingerprint(), "effect:c-1", c.fingerprint()), rig.db.rows());
        assertEquals(1.0, rig.count("idem.pipeline.group.retries", "reason", "conflict"));
        assertEquals(Set.of(
                new Marked(a, JsonText.encode(result("a-1")), true),
                new Marked(b, JsonText.encode(winners), true),
                new Marked(c, JsonText.encode(result("c-1")), true)), Set.copyOf(rig.cache.marked()));
    }

    @Test
    void aConcurrentWinnerWithOtherContentMakesTheDeliveryKeyReused() {
        PipelineRig rig = new PipelineRig();
        rig.faults.commitsMeanwhile(rig.done(request("orders", "a-1", "other"), result("a-1")));

        Outcome outcome = await(rig.pipeline.execute(a, rig.applying(a)));

        assertEquals(new Outcome.KeyReused(), outcome);
        assertEquals(Map.of(), rig.db.rows());
        assertEquals(List.of(), rig.cache.marked());
    }

    @Test
    void aConflictWhoseRowIsGoneWhenLookedUpIsTriedOnceMoreThenInFlight() {
        // the first insert meets the row with the COMMIT; the next ones are judged before, and look it up
        PipelineRig once = new PipelineRig();
        once.faults.vanishesMeanwhile("orders", "a-1", 2);
        assertEquals(new Outcome.Processed(result("a-1")), await(once.pipeline.execute(a, once.applying(a))));
        assertEquals(3, once.db.transactions().size());

        PipelineRig twice = new PipelineRig();
        twice.faults.vanishesMeanwhile("orders", "a-1", 3);
        assertEquals(Outcomes.inFlight(twice.config), await(twice.pipeline.execute(a, twice.applying(a))));
        assertEquals(3, twice.db.transactions().size());
        assertTrue(twice.db.committed(a).isEmpty());
        assertEquals(Map.of(), twice.db.rows());
    }

    @Test
    void aGroupOfMixedOutcomesGivesEachTheOutcomeItWouldHaveHadAlone() {
        IdemRequest applied = request("ledger", "k1", 1);
        IdemRequest already = request("ledger", "k2", 2);
        IdemRequest anomalous = request("ledger", "k3", 3);
        IdemRequest refused = request("ledger", "k4", 4);
        IdemRequest duplicate = request("ledger", "k5", 5);
        JsonObject earlier = new JsonObject().put("balance", 500);
        Function<PipelineRig, List<Item>> poll = rig -> {
            rig.db.seed(rig.done(duplicate, earlier), null);
            rig.cache.answer(duplicate, new PreCheck.Processing());
            return List.of(
                    new Item(applied, rig.work(applied, new Effect.Processed(result("k1")))),
                    new Item(already, rig.work(already, new Effect.Duplicate(result("k2")))),
                    new Item(anomalous, rig.work(anomalous, new Effect.Anomaly("OVERDRAWN", result("k3")))),
                    new Item(refused, rig.work(refused, new Effect.Rejected("NO_ACCOUNT", "no account 4"))),
                    new Item(duplicate, rig.work(duplicate, new Effect.Processed(result("k5")))));
        };
        PipelineRig rig = new PipelineRig();

        List<Outcome> outcomes = await(rig.pipeline.executeAll(poll.apply(rig)));

        assertEquals(List.of(
                new Outcome.Processed(result("k1")),
                new Outcome.Duplicate(Layer.STATE, result("k2")),
                new Outcome.Anomaly("OVERDRAWN", result("k3")),
                new Outcome.Rejected("NO_ACCOUNT", "no account 4"),
                new Outcome.Duplicate(Layer.DB, earlier)), outcomes);
        for (int i = 0; i < outcomes.size(); i++) {
            PipelineRig alone = new PipelineRig();
            Item item = poll.apply(alone).get(i);
            assertEquals(outcomes.get(i), await(alone.pipeline.execute(item.request(), item.work())), "item " + i);
        }
        // one transaction; each answer is recorded in it, the refusal too (it wrote nothing)
        assertEquals(1, rig.db.transactions().size());
        long tx = rig.db.transactions().get(0).id;
        assertEquals(result("k1"), recorded(rig, applied, tx));
        assertEquals(result("k2"), recorded(rig, already, tx));
        assertEquals(result("k3"), recorded(rig, anomalous, tx));
        assertEquals(new Outcome.Rejected("NO_ACCOUNT", "no account 4", new JsonObject(), Optional.of(Layer.DB)),
                Outcomes.answered(Layer.DB, recorded(rig, refused, tx)));
        assertEquals(InMemoryDatabase.ANOTHER, rig.db.committed(duplicate).orElseThrow().writtenIn());
        assertEquals(0, rig.runs("k5"));
        assertEquals(Set.of("effect:k1", "effect:k2", "effect:k3"), rig.db.rows().keySet());
        assertEquals(Set.of(applied, already, anomalous, refused, duplicate),
                Set.copyOf(rig.cache.marked().stream().map(Marked::request).toList()));
        assertEquals(0.0, rig.count("idem.pipeline.group.retries"));
    }

    @Test
    void aStatementErrorOfOneWorkFailsItAloneAndTheOthersCommit() {
        PipelineRig rig = new PipelineRig();
        rig.faults.failWritesOf("effect:b-1");

        List<Settled> settled = await(rig.protocol.transact(List.of(pending(rig, a), pending(rig, b), pending(rig, c))));

        assertEquals(new Settled.Decided(new Outcome.Processed(result("a-1")), JsonText.encode(result("a-1"))),
                settled.get(0));
        assertEquals(DedupStore.Failure.OTHER, rig.store.classify(assertInstanceOf(PgException.class,
                assertInstanceOf(Settled.Failed.class, settled.get(1)).failure())));
        assertEquals(new Settled.Decided(new Outcome.Processed(result("c-1")), JsonText.encode(result("c-1"))),
                settled.get(2));
        // the group failed as a whole, then each delivery ran alone
        List<Tx> txs = rig.db.transactions();
        assertEquals(List.of(Ending.FAILED, Ending.COMMITTED, Ending.FAILED, Ending.COMMITTED),
                txs.stream().map(tx -> tx.ending).toList());
        assertEquals(txs.get(1).id, rig.db.committed(a).orElseThrow().writtenIn());
        assertEquals(txs.get(3).id, rig.db.committed(c).orElseThrow().writtenIn());
        assertTrue(rig.db.committed(b).isEmpty());
        assertEquals(Set.of("effect:a-1", "effect:c-1"), rig.db.rows().keySet());
        assertEquals(1.0, rig.count("idem.pipeline.group.retries", "reason", "error"));
    }

    @Test
    void aDeliveryWhoseDataTheDatabaseRefusesIsRejectedAloneAndTheOthersCommit() {
        PipelineRig rig = new PipelineRig();
        rig.faults.refuseDataOf("effect:b-1");

        List<Settled> settled = await(rig.protocol.transact(List.of(pending(rig, a), pending(rig, b), pending(rig, c))));

        assertEquals(new Settled.Decided(new Outcome.Processed(result("a-1")), JsonText.encode(result("a-1"))),
                settled.get(0));
        Outcome refused = assertInstanceOf(Settled.Decided.class, settled.get(1)).outcome();
        assertEquals(Outcome.Rejected.INVALID_DATA, assertInstanceOf(Outcome.Rejected.class, refused).reason());
        assertNull(((Settled.Decided) settled.get(1)).doneInCache());
        assertEquals(new Settled.Decided(new Outcome.Processed(result("c-1")), JsonText.encode(result("c-1"))),
                settled.get(2));
        assertTrue(rig.db.committed(b).isEmpty());
        assertEquals(Set.of("effect:a-1", "effect:c-1"), rig.db.rows().keySet());
    }

    @Test
    void aBatchWithADeliveryWhoseDataIsRefusedGivesItsOutcomeAndAppliesTheRest() {
        PipelineRig rig = new PipelineRig();
        rig.faults.refuseDataOf("effect:b-1");

        List<Outcome> outcomes = await(rig.pipeline.executeAll(List.of(item(rig, a), item(rig, b), item(rig, c))));

        assertInstanceOf(Outcome.Processed.class, outcomes.get(0));
        assertEquals(Outcome.Rejected.INVALID_DATA, assertInstanceOf(Outcome.Rejected.class, outcomes.get(1)).reason());
        assertInstanceOf(Outcome.Processed.class, outcomes.get(2));
        assertEquals(Set.of(key(a), key(c)), rig.db.committedRecords().keySet());
    }

    @Test
    void aBatchWithAFailingDeliveryFailsButWhatCommittedAloneIsKnownToTheCache() {
        PipelineRig rig = new PipelineRig();
        rig.faults.failWritesOf("effect:b-1");

        assertEquals(DedupStore.Failure.OTHER, rig.store.classify(assertThrows(PgException.class,
                () -> await(rig.pipeline.executeAll(List.of(item(rig, a), item(rig, b), item(rig, c)))))));

        assertEquals(Set.of(key(a), key(c)), rig.db.committedRecords().keySet());
        assertEquals(List.of(a, c), rig.cache.marked().stream().map(Marked::request).toList());
        assertTrue(rig.cache.marked().stream().allMatch(Marked::committedBefore));
    }

    @Test
    void aStoreOutageFailsEveryDeliveryOfTheGroupWithoutAPartialCommit() {
        PipelineRig rig = new PipelineRig();
        rig.faults.goDownOnRecord();

        List<Settled> settled = await(rig.protocol.transact(List.of(pending(rig, a), pending(rig, b), pending(rig, c))));

        assertEquals(3, settled.size());
        settled.forEach(s -> assertEquals(DedupStore.Failure.UNAVAILABLE, rig.store.classify(assertInstanceOf(PgException.class,
                assertInstanceOf(Settled.Failed.class, s).failure()))));
        // not run delivery by delivery: no delivery alone would get past an outage
        assertEquals(1, rig.db.transactions().size());
        assertEquals(Map.of(), rig.db.committedRecords());
        assertEquals(Map.of(), rig.db.rows());
        assertEquals(0.0, rig.count("idem.pipeline.group.retries"));
    }

    @Test
    void aBatchMeetingAnOutageFailsAndTellsTheCacheNothing() {
        PipelineRig rig = new PipelineRig();
        rig.faults.goDownOnRecord();

        assertEquals(DedupStore.Failure.UNAVAILABLE, rig.store.classify(assertThrows(PgException.class,
                () -> await(rig.pipeline.executeAll(List.of(item(rig, a), item(rig, b)))))));
        assertEquals(List.of(), rig.cache.marked());
        assertEquals(Map.of(), rig.db.committedRecords());
    }

    @Test
    void oneDeliveryOfAGroupWaitingPastItsBoundIsInFlightAndTheOthersCommit() {
        PipelineRig rig = new PipelineRig(Map.of(
                "idem.pipeline.scopes.orders.concurrent-wait", "250ms",
                "idem.pipeline.in-flight-retry-after", "3s"));
        rig.faults.lockedByAnother("orders", "b-1");

        List<Settled> settled = await(rig.protocol.transact(List.of(pending(rig, a), pending(rig, b), pending(rig, c))));

        assertEquals(List.of(
                new Settled.Decided(new Outcome.Processed(result("a-1")), JsonText.encode(result("a-1"))),
                new Settled.Decided(new Outcome.InFlight(Duration.ofSeconds(3)), null),
                new Settled.Decided(new Outcome.Processed(result("c-1")), JsonText.encode(result("c-1")))), settled);
        assertEquals(Set.of(key(a), key(c)), rig.db.committedRecords().keySet());
        assertEquals(Set.of("effect:a-1", "effect:c-1"), rig.db.rows().keySet());
    }

    @Test
    void aKeyTwiceInOneBatchHasItsSecondCopyAnsweredAsADuplicate() {
        PipelineRig rig = new PipelineRig();

        List<Outcome> outcomes = await(rig.pipeline.executeAll(List.of(item(rig, a), item(rig, a), item(rig, b))));

        assertEquals(List.of(
                new Outcome.Processed(result("a-1")),
                new Outcome.Duplicate(Layer.REDIS, result("a-1")),
                new Outcome.Processed(result("b-1"))), outcomes);
        assertEquals(1, rig.runs("a-1"));
        assertEquals(1, rig.db.transactions().size());
    }

    @Test
    void worksKnownBeforeTheyRunAreRecordedInTheSameTransaction() {
        PipelineRig rig = new PipelineRig();
        rig.faults.commitsMeanwhile(rig.done(b, result("b-1")));
        List<Item> items = List.of(a, b, c).stream()
                .map(r -> new Item(r, Work.applying(result(r.key()), Statement.of("effect:" + r.key(), Tuple.of(r.fingerprint())))))
                .toList();

        List<Outcome> outcomes = await(rig.pipeline.executeAll(items));

        assertEquals(List.of(
                new Outcome.Processed(result("a-1")),
                new Outcome.Duplicate(Layer.DB, result("b-1")),
                new Outcome.Processed(result("c-1"))), outcomes);
        assertEquals(Set.of("effect:a-1", "effect:c-1"), rig.db.rows().keySet());
        assertEquals(rig.db.committed(a).orElseThrow().writtenIn(), rig.db.committed(c).orElseThrow().writtenIn());
    }

    @Test
    void worksThatKnowTheirEffectOnceBegunAreRecordedWithItAndAStatementErrorFailsItsOwnAlone() {
        PipelineRig rig = new PipelineRig();
        rig.faults.failWritesOf("effect:b-1");
        // as an endpoint answering with KnownAnswer: the effect is known when the work begins, not by its type
        Function<IdemRequest, Work> begunKnown = r -> new Work() {
            @Override
            public Uni<Effect> run(SqlConnection tx) {
                throw new AssertionError("the pipeline begins a work, it does not run it");
            }

            @Override
            public Begun begin(SqlConnection tx) {
                return new Begun.Answered(new Effect.Processed(result(r.key())),
                        List.of(Statement.of("effect:" + r.key(), Tuple.of(r.fingerprint()))));
            }
        };

        List<Settled> settled = await(rig.protocol.transact(List.of(a, b, c).stream()
                .map(r -> new Pending(r, begunKnown.apply(r), false)).toList()));

        assertEquals(new Settled.Decided(new Outcome.Processed(result("a-1")), JsonText.encode(result("a-1"))),
                settled.get(0));
        assertInstanceOf(Settled.Failed.class, settled.get(1));
        assertEquals(new Settled.Decided(new Outcome.Processed(result("c-1")), JsonText.encode(result("c-1"))),
                settled.get(2));
        assertEquals(List.of(Ending.FAILED, Ending.COMMITTED, Ending.FAILED, Ending.COMMITTED),
                rig.db.transactions().stream().map(tx -> tx.ending).toList());
        assertTrue(rig.db.committed(b).isEmpty());
        assertEquals(result("a-1"), recorded(rig, a, rig.db.transactions().get(1).id));
        assertEquals(Set.of("effect:a-1", "effect:c-1"), rig.db.rows().keySet());
    }

    private static Item item(PipelineRig rig, IdemRequest request) {
        return new Item(request, rig.applying(request));
    }

    private static Pending pending(PipelineRig rig, IdemRequest request) {
        return new Pending(request, rig.applying(request), false);
    }

    private static String key(IdemRequest request) {
        return DedupStore.batchKey(request);
    }

    private static JsonObject recorded(PipelineRig rig, IdemRequest request, long tx) {
        InMemoryDatabase.Stored stored = rig.db.committed(request).orElseThrow();
        assertEquals(DedupRecord.Status.DONE, stored.record().status());
        assertEquals(tx, stored.writtenIn());
        return stored.record().result();
    }
}
