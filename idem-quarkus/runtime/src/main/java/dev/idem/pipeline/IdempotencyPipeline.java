package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;

/**
 * What every entry point calls. One-phase deliveries take the {@link OnePhase} protocol: the Redis
 * pre-check, then the business work and the key's dedup record (written once, DONE, on the unique
 * key) in one transaction, then DONE in Redis once the database committed. A single delivery is
 * gathered with those that reach the database at the same moment ({@link GroupCommit}; alone with
 * {@code idem.pipeline.group-commit.max-size=1}); a Kafka poll goes in rounds
 * ({@link PollRounds}). Work whose effect lies outside the database takes the {@link TwoPhase}
 * protocol. Failures of Postgres are not outcomes: they fail the Uni, and the caller retries or
 * answers 503.
 */
@ApplicationScoped
public class IdempotencyPipeline {

    private final OnePhase protocol;
    private final OnePhase.Transactions single;
    private final PollRounds polls;
    private final TwoPhase twoPhase;
    private final DedupStore store;

    IdempotencyPipeline(OnePhase protocol, GroupCommit groups, PollRounds polls, TwoPhase twoPhase, DedupStore store,
                        PipelineConfig config) {
        this.protocol = protocol;
        this.single = config.groupCommit().maxSize() > 1 ? groups : protocol::transact;
        this.polls = polls;
        this.twoPhase = twoPhase;
        this.store = store;
    }

    /**
     * One-phase mode: {@code work} and the key's record in one transaction. A key Redis did not
     * claim for this delivery may have its record already: that is looked up before the work runs.
     */
    public Uni<Outcome> execute(IdemRequest request, Work work) {
        return protocol.run(List.of(new Item(request, work)), single, false).map(outcomes -> outcomes.get(0));
    }

    /**
     * {@link #execute} for many deliveries at once, such as one Kafka poll: for each, the outcome it
     * would have had alone, in the items' order. The round trips are per batch: one Redis call of
     * pre-checks, one transaction, one Redis call of DONE marks. If the transaction fails the Uni
     * fails and no delivery took effect; the caller retries the batch.
     */
    public Uni<List<Outcome>> executeAll(List<Item> items) {
        return polls.execute(items);
    }

    /**
     * Whether a failure of {@link #execute} or {@link #executeAll} is transient: the database could
     * not be reached or answered too late, so nothing took effect and the same delivery may succeed
     * later (answer 503, or retry the record). Any other failure (the work threw, or the database
     * refused one of its statements) would fail the same way again.
     */
    public boolean isTransient(Throwable failure) {
        return store.classify(failure) == DedupStore.Failure.UNAVAILABLE;
    }

    /**
     * Two-phase mode: runs the {@link TwoPhaseWork} registered for the request's scope, with
     * {@code payload} stored in the record so that recovery can run the effect again. A delivery
     * that finds the key within its lease is IN_FLIGHT; one that finds it hanging takes it over.
     * The first delivery is PROCESSED once the effect is confirmed, IN_FLIGHT when its attempt
     * failed and will be tried again, REJECTED (FAILED) when it was the last attempt.
     */
    public Uni<Outcome> executeTwoPhase(IdemRequest request, JsonObject payload) {
        return twoPhase.execute(request, payload);
    }
}
