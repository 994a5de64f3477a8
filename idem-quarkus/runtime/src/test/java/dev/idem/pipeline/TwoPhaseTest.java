package dev.idem.pipeline;

import static dev.idem.pipeline.PipelineRig.await;
import static dev.idem.pipeline.PipelineRig.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.InMemoryDedupCache.Marked;
import dev.idem.pipeline.InMemoryDatabase.Stored;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Two-phase deliveries ({@link IdempotencyPipeline#executeTwoPhase}): the claim under a lease, the
 * effect, the confirmation by compare-and-set, and what a later copy does with a record whose holder
 * hung, failed or lost its lease. The recovery job and an operator's re-drive find their records
 * with queries of their own, so they are tested on Postgres: the integration tests'
 * {@code RecoveryRaceTest}, the service's {@code ExternalIssuerTwoPhaseTest}.
 */
class TwoPhaseTest {

    private static final Map<String, String> PAYOUTS = Map.of(
            "idem.pipeline.lease", "30s",
            "idem.pipeline.retry-delay", "5s",
            "idem.pipeline.in-flight-retry-after", "2s");

    private final IdemRequest payout = request("payouts", "p-1", "acct-9", 100);
    private final JsonObject payload = new JsonObject().put("account", "acct-9").put("amount", 100);
    private final JsonObject paid = new JsonObject().put("transfer", "t-77");
    private final Outcome inFlight = new Outcome.InFlight(Duration.ofSeconds(2));

    @Test
    void theFirstDeliveryClaimsRunsTheEffectAndConfirmsItDone() {
        PipelineRig rig = new PipelineRig(PAYOUTS);
        Provider provider = provider(rig);

        Outcome outcome = await(rig.pipeline.executeTwoPhase(payout, payload));

        assertEquals(new Outcome.Processed(paid), outcome);
        Stored stored = rig.db.committed(payout).orElseThrow();
        assertEquals(DedupRecord.Status.DONE, stored.record().status());
        assertEquals(paid, stored.record().result());
        assertEquals(1, stored.record().attempts());
        assertNull(stored.record().leaseUntil());
        assertNull(stored.payload());
        // the claim commits alone; the confirmation and the business change in a second transaction
        assertEquals(2, rig.db.transactions().size());
        assertEquals(rig.db.transactions().get(0).id, stored.writtenIn());
        assertEquals(rig.db.transactions().get(1).id, stored.changedIn());
        assertEquals(List.of(payload), provider.performed);
        assertEquals(Map.of("confirmed:p-1", paid.encode()), rig.db.rows());
        assertEquals(List.of(new Marked(payout, JsonText.encode(paid), true)), rig.cache.marked());

        assertEquals(new Outcome.Duplicate(Layer.REDIS, paid), await(rig.pipeline.executeTwoPhase(payout, payload)));
        assertEquals(1, provider.performed.size());
    }

    @Test
    void aCopyArrivingWhileTheEffectRunsWithinItsLeaseIsInFlight() throws Exception {
        PipelineRig rig = new PipelineRig(PAYOUTS);
        Provider provider = provider(rig);
        CompletableFuture<JsonObject> answer = new CompletableFuture<>();
        provider.next(() -> Uni.createFrom().completionStage(answer));

        CompletableFuture<Outcome> first = rig.pipeline.executeTwoPhase(payout, payload).subscribeAsCompletionStage();
        assertEquals(DedupRecord.Status.PROCESSING, rig.db.committed(payout).orElseThrow().record().status());
        rig.clock.advance(Duration.ofSeconds(20));
        Outcome copy = await(rig.pipeline.executeTwoPhase(payout, payload));

        assertEquals(inFlight, copy);
        assertEquals(1, provider.performed.size());
        assertFalse(first.isDone());
        answer.complete(paid);
        assertEquals(new Outcome.Processed(paid), first.get(10, TimeUnit.SECONDS));
        assertEquals(0.0, rig.count("idem.dedup.takeovers"));
    }

    @Test
    void aCopyTheCacheCannotAnswerFindsTheDoneRecordAndRefreshesTheCache() {
        PipelineRig rig = new PipelineRig(PAYOUTS);
        Provider provider = provider(rig);
        await(rig.pipeline.executeTwoPhase(payout, payload));
        rig.cache.answer(payout, new DedupCache.PreCheck.Processing());

        assertEquals(new Outcome.Duplicate(Layer.DB, paid), await(rig.pipeline.executeTwoPhase(payout, payload)));
        assertEquals(1, provider.performed.size());
        assertEquals(List.of(new Marked(payout, JsonText.encode(paid), true), new Marked(payout, JsonText.encode(paid), true)),
                rig.cache.marked());

        IdemRequest reused = request("payouts", "p-1", "acct-9", 999);
        assertEquals(new Outcome.KeyReused(), await(rig.pipeline.executeTwoPhase(reused, payload)));
        assertEquals(1, provider.performed.size());
        assertEquals(2, rig.cache.marked().size());
    }

    @Test
    void aClaimMeetingARowGoneWhenReadIsTriedOnceMoreThenInFlight() {
        PipelineRig once = new PipelineRig(PAYOUTS);
        provider(once);
        once.faults.vanishesMeanwhile("payouts", "p-1", 1);
        assertEquals(new Outcome.Processed(paid), await(once.pipeline.executeTwoPhase(payout, payload)));

        PipelineRig twice = new PipelineRig(PAYOUTS);
        Provider provider = provider(twice);
        twice.faults.vanishesMeanwhile("payouts", "p-1", 2);
        assertEquals(inFlight, await(twice.pipeline.executeTwoPhase(payout, payload)));
        assertTrue(provider.performed.isEmpty());
        assertTrue(twice.db.committed(payout).isEmpty());
    }

    @Test
    void aConfirmationRefusedCountsAsAFailedAttempt() {
        PipelineRig rig = new PipelineRig(PipelineRig.with(PAYOUTS, "idem.pipeline.max-attempts", "1"));
        Provider provider = provider(rig);
        provider.next(() -> Uni.createFrom().item(new JsonObject().put("refused", "acct-9 closed")));

        assertEquals(Outcomes.failedForGood(), await(rig.pipeline.executeTwoPhase(payout, payload)));

        Stored stored = rig.db.committed(payout).orElseThrow();
        assertEquals(DedupRecord.Status.FAILED, stored.record().status());
        assertTrue(stored.lastError().contains("UNKNOWN_ACCOUNT"), stored.lastError());
        assertEquals(Map.of(), rig.db.rows());
        assertEquals(List.of(), rig.cache.marked());
    }

    @Test
    void aClaimWaitingPastTheConcurrentWaitIsInFlight() {
        PipelineRig rig = new PipelineRig(PipelineRig.with(PAYOUTS,
                "idem.pipeline.scopes.payouts.concurrent-wait", "100ms"));
        Provider provider = provider(rig);
        rig.faults.lockedByAnother("payouts", "p-1");

        assertEquals(inFlight, await(rig.pipeline.executeTwoPhase(payout, payload)));
        assertTrue(provider.performed.isEmpty());
        assertTrue(rig.db.committed(payout).isEmpty());
    }

    @Test
    void aHangingRecordIsTakenOverByADuplicateAndCompletedOnce() throws Exception {
        PipelineRig rig = new PipelineRig(PAYOUTS);
        Provider provider = provider(rig);
        CompletableFuture<JsonObject> hung = new CompletableFuture<>();
        provider.next(() -> Uni.createFrom().completionStage(hung));
        CompletableFuture<Outcome> first = rig.pipeline.executeTwoPhase(payout, payload).subscribeAsCompletionStage();

        rig.clock.advance(Duration.ofSeconds(31));
        Outcome copy = await(rig.pipeline.executeTwoPhase(payout, payload));

        assertEquals(new Outcome.Processed(paid), copy);
        Stored stored = rig.db.committed(payout).orElseThrow();
        assertEquals(DedupRecord.Status.DONE, stored.record().status());
        assertEquals(2, stored.record().attempts());
        assertEquals(List.of(payload, payload), provider.performed);
        assertEquals(1.0, rig.count("idem.dedup.takeovers", "scope", "payouts"));

        // the first holder answers late: its lease is gone, so its confirmation changes nothing
        hung.complete(new JsonObject().put("transfer", "t-late"));
        assertEquals(inFlight, first.get(10, TimeUnit.SECONDS));
        assertEquals(paid, rig.db.committed(payout).orElseThrow().record().result());
        assertEquals(Map.of("confirmed:p-1", paid.encode()), rig.db.rows());

        assertEquals(new Outcome.Duplicate(Layer.REDIS, paid), await(rig.pipeline.executeTwoPhase(payout, payload)));
        assertEquals(2, provider.performed.size());
    }

    @Test
    void aFailedAttemptIsTriedAgainByALaterCopyAndTheLastFailureIsFailedForGood() {
        PipelineRig rig = new PipelineRig(PipelineRig.with(PAYOUTS, "idem.pipeline.max-attempts", "2"));
        Provider provider = provider(rig);
        provider.next(() -> Uni.createFrom().failure(new IllegalStateException("provider down")));
        provider.next(() -> Uni.createFrom().failure(new IllegalStateException("provider still down")));

        assertEquals(inFlight, await(rig.pipeline.executeTwoPhase(payout, payload)));
        Stored retrying = rig.db.committed(payout).orElseThrow();
        assertEquals(DedupRecord.Status.PROCESSING, retrying.record().status());
        assertEquals(PipelineRig.START.plus(Duration.ofSeconds(5)), retrying.record().leaseUntil());
        assertTrue(retrying.lastError().contains("provider down"), retrying.lastError());

        // a copy within the retry delay waits; after it, the copy takes the second and last attempt
        assertEquals(inFlight, await(rig.pipeline.executeTwoPhase(payout, payload)));
        assertEquals(1, provider.performed.size());
        rig.clock.advance(Duration.ofSeconds(6));
        assertEquals(Outcomes.failedForGood(), await(rig.pipeline.executeTwoPhase(payout, payload)));

        Stored failed = rig.db.committed(payout).orElseThrow();
        assertEquals(DedupRecord.Status.FAILED, failed.record().status());
        assertEquals(2, failed.record().attempts());
        assertTrue(failed.lastError().contains("provider still down"), failed.lastError());
        assertEquals(1.0, rig.count("idem.dedup.failed", "scope", "payouts"));
        assertEquals(Map.of(), rig.db.rows());
        assertEquals(List.of(), rig.cache.marked());

        // and so it stays: no further attempt
        rig.clock.advance(Duration.ofMinutes(10));
        assertEquals(Outcomes.failedForGood(), await(rig.pipeline.executeTwoPhase(payout, payload)));
        assertEquals(2, provider.performed.size());
    }

    @Test
    void aHangingRecordPastMaxAttemptsIsFailedWithoutRunningTheEffectAgain() {
        PipelineRig rig = new PipelineRig(PipelineRig.with(PAYOUTS, "idem.pipeline.max-attempts", "1"));
        Provider provider = provider(rig);
        provider.next(() -> Uni.createFrom().completionStage(new CompletableFuture<>()));
        rig.pipeline.executeTwoPhase(payout, payload).subscribeAsCompletionStage();

        rig.clock.advance(Duration.ofSeconds(31));

        assertEquals(Outcomes.failedForGood(), await(rig.pipeline.executeTwoPhase(payout, payload)));
        assertEquals(DedupRecord.Status.FAILED, rig.db.committed(payout).orElseThrow().record().status());
        assertEquals(1, provider.performed.size());
        assertEquals(1.0, rig.count("idem.dedup.failed", "scope", "payouts"));
        assertEquals(0.0, rig.count("idem.dedup.takeovers"));
    }

    @Test
    void aTakeoverThatLosesTheRaceToAnotherDoesNothing() {
        PipelineRig rig = new PipelineRig(PAYOUTS);
        Provider provider = provider(rig);
        provider.next(() -> Uni.createFrom().completionStage(new CompletableFuture<>()));
        rig.pipeline.executeTwoPhase(payout, payload).subscribeAsCompletionStage();
        rig.clock.advance(Duration.ofSeconds(31));
        rig.faults.takenOverFirstByAnother("payouts", "p-1");

        assertEquals(inFlight, await(rig.pipeline.executeTwoPhase(payout, payload)));

        Stored stored = rig.db.committed(payout).orElseThrow();
        assertEquals(DedupRecord.Status.PROCESSING, stored.record().status());
        assertEquals(2, stored.record().attempts());
        assertEquals(InMemoryDatabase.ANOTHER, stored.changedIn());
        assertEquals(1, provider.performed.size());
        assertEquals(0.0, rig.count("idem.dedup.takeovers"));
    }

    private Provider provider(PipelineRig rig) {
        Provider provider = new Provider(rig, paid);
        rig.twoPhaseWorks.put("payouts", provider);
        return provider;
    }

    /**
     * The other side of a two-phase work: answers {@code paid} unless a test queued other answers;
     * its confirmation writes one business row in the pipeline's transaction.
     */
    static final class Provider implements TwoPhaseWork {
        final List<JsonObject> performed = new CopyOnWriteArrayList<>();
        private final Deque<Supplier<Uni<JsonObject>>> answers = new ArrayDeque<>();
        private final PipelineRig rig;
        private final JsonObject usual;

        Provider(PipelineRig rig, JsonObject usual) {
            this.rig = rig;
            this.usual = usual;
        }

        synchronized void next(Supplier<Uni<JsonObject>> answer) {
            answers.add(answer);
        }

        @Override
        public Uni<JsonObject> perform(String key, JsonObject payload) {
            performed.add(payload);
            Supplier<Uni<JsonObject>> answer;
            synchronized (this) {
                answer = answers.poll();
            }
            return answer == null ? Uni.createFrom().item(usual) : answer.get();
        }

        @Override
        public Uni<Effect> confirm(SqlConnection tx, String key, JsonObject payload, JsonObject performed) {
            if (performed.containsKey("refused")) {
                return Uni.createFrom().item(new Effect.Rejected("UNKNOWN_ACCOUNT", performed.getString("refused")));
            }
            return rig.db.write(tx, "confirmed:" + key, performed.encode()).replaceWith(new Effect.Processed(performed));
        }
    }
}
