package dev.idem.pipeline;

import static dev.idem.pipeline.PipelineRig.request;
import static dev.idem.pipeline.PipelineRig.result;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.InMemoryDatabase.Ending;
import dev.idem.pipeline.InMemoryDatabase.Tx;
import io.micrometer.core.instrument.DistributionSummary;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link GroupCommit} on a real event loop: who shares a transaction with whom. */
class GroupCommitTest {

    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void deliveriesArrivingWhileTheLoopsTransactionIsBusyShareTheNextOneAndCopiesOfAKeyNever() throws Exception {
        PipelineRig rig = new PipelineRig();
        IdemRequest a = request("orders", "a-1", "x");
        IdemRequest b = request("orders", "b-1", "y");
        IdemRequest c = request("orders", "c-1", "z");
        CompletableFuture<Void> firstEnds = rig.faults.holdNextEnd();
        List<CompletableFuture<Outcome>> answers = new ArrayList<>();
        CompletableFuture<Void> submitted = new CompletableFuture<>();

        Context loop = vertx.getOrCreateContext();
        loop.runOnContext(ignored -> {
            // a finds the loop idle and starts a transaction at once; b, b's copy and c find it busy
            for (IdemRequest request : List.of(a, b, b, c)) {
                answers.add(rig.pipeline.execute(request, rig.applying(request)).subscribeAsCompletionStage());
            }
            submitted.complete(null);
        });
        submitted.get(10, TimeUnit.SECONDS);
        assertEquals(1, rig.db.transactions().size());
        assertTrue(answers.stream().noneMatch(CompletableFuture::isDone), "no answer before its commit");

        firstEnds.complete(null);
        List<Outcome> outcomes = new ArrayList<>();
        for (CompletableFuture<Outcome> answer : answers) {
            outcomes.add(answer.get(10, TimeUnit.SECONDS));
        }

        assertEquals(List.of(
                new Outcome.Processed(result("a-1")),
                new Outcome.Processed(result("b-1")),
                new Outcome.Duplicate(Layer.DB, result("b-1")),
                new Outcome.Processed(result("c-1"))), outcomes);
        List<Tx> txs = rig.db.transactions();
        assertEquals(3, txs.size());
        // the copy's transaction found b's record and wrote nothing
        assertEquals(List.of(Ending.COMMITTED, Ending.COMMITTED, Ending.ROLLED_BACK),
                txs.stream().map(tx -> tx.ending).toList());
        assertEquals(Set.of(DedupStore.batchKey(a)), txs.get(0).touched);
        assertEquals(Set.of(DedupStore.batchKey(b), DedupStore.batchKey(c)), txs.get(1).touched);
        assertEquals(Set.of(DedupStore.batchKey(b)), txs.get(2).touched);
        assertEquals(txs.get(0).id, rig.db.committed(a).orElseThrow().writtenIn());
        assertEquals(txs.get(1).id, rig.db.committed(b).orElseThrow().writtenIn());
        assertEquals(txs.get(1).id, rig.db.committed(c).orElseThrow().writtenIn());
        assertEquals(1, rig.runs("b-1"));
        DistributionSummary sizes = rig.registry.find("idem.pipeline.group.size").summary();
        assertEquals(3, sizes.count());
        assertEquals(4.0, sizes.totalAmount());
    }
}
