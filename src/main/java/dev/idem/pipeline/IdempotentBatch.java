package dev.idem.pipeline;

import dev.idem.pipeline.RedisGuard.PreCheck;
import dev.idem.support.JsonText;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link IdempotencyPipeline#execute} for many deliveries at once, such as one Kafka poll: the same
 * layers and, for each delivery, the outcome it would have had alone. The round trips are per
 * batch instead of per delivery: one Redis script of pre-checks; one transaction holding one
 * claim of every key, the works (pipelined on its connection) and one completion; one Redis
 * script of DONE marks after the commit.
 *
 * <p>One-phase work only. A claim waits for a concurrent holder of its key, as a single delivery
 * of a scope without {@code concurrent-wait} does. If the transaction fails, no delivery of the
 * batch took effect, and the caller retries the batch.
 */
@ApplicationScoped
public class IdempotentBatch {

    /** One delivery of a batch: its key, and the work the key guards. */
    public record Item(IdemRequest request, Work work) {}

    private final RedisGuard redis;
    private final DedupStore store;
    private final Pool pool;
    private final PipelineConfig config;
    private final DedupConfig dedup;
    private final PipelineMetrics metrics;
    private final Clock clock;

    IdempotentBatch(RedisGuard redis, DedupStore store, Pool pool, PipelineConfig config, DedupConfig dedup,
                    PipelineMetrics metrics, Clock clock) {
        this.redis = redis;
        this.store = store;
        this.pool = pool;
        this.config = config;
        this.dedup = dedup;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** The outcome of each item, in the items' order. */
    public Uni<List<Outcome>> execute(List<Item> items) {
        Outcome[] outcomes = new Outcome[items.size()];
        Uni<Void> done = Uni.createFrom().voidItem();
        for (List<Integer> round : rounds(items)) {
            done = done.chain(() -> round(items, round, outcomes));
        }
        return done.map(ignored -> Arrays.asList(outcomes));
    }

    /**
     * A key that comes twice in one batch has its second copy in a second round, after the first
     * committed: it then meets the first as any duplicate does.
     */
    private static List<List<Integer>> rounds(List<Item> items) {
        List<List<Integer>> rounds = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < items.size(); i++) {
            int round = seen.merge(DedupStore.batchKey(items.get(i).request()), 1, Integer::sum) - 1;
            if (round == rounds.size()) {
                rounds.add(new ArrayList<>());
            }
            rounds.get(round).add(i);
        }
        return rounds;
    }

    private Uni<Void> round(List<Item> items, List<Integer> round, Outcome[] outcomes) {
        return redis.preCheckAll(requests(items, round)).chain(checks -> {
            List<Integer> unanswered = new ArrayList<>();
            for (int j = 0; j < round.size(); j++) {
                int i = round.get(j);
                if (checks.get(j) instanceof PreCheck.Done done) {
                    outcomes[i] = Verdicts.ofRedis(items.get(i).request(), done);
                } else {
                    unanswered.add(i);
                }
            }
            return unanswered.isEmpty() ? Uni.createFrom().voidItem() : transact(items, unanswered, outcomes);
        }).invoke(() -> round.forEach(i -> metrics.outcome(items.get(i).request().scope(), outcomes[i])));
    }

    /** One transaction for the deliveries Redis could not answer; Redis hears DONE after the commit. */
    private Uni<Void> transact(List<Item> items, List<Integer> indices, Outcome[] outcomes) {
        return Transactions.run(pool, tx -> decide(tx, items, indices, outcomes), cache -> true)
                .chain(cache -> redis.markDoneAll(cache.requests, cache.results));
    }

    private Uni<ToCache> decide(SqlConnection tx, List<Item> items, List<Integer> indices, Outcome[] outcomes) {
        Instant now = clock.instant();
        List<IdemRequest> requests = requests(items, indices);
        List<Instant> expiresAt = requests.stream()
                .map(request -> now.plus(config.retention(request.scope(), dedup)))
                .toList();
        return store.claimAll(tx, requests, now, expiresAt).chain(claimed -> {
            List<Integer> mine = new ArrayList<>();
            List<Integer> others = new ArrayList<>();
            for (int i : indices) {
                (claimed.contains(DedupStore.batchKey(items.get(i).request())) ? mine : others).add(i);
            }
            // the works and the lookup of the other keys' records go out together, pipelined
            return Uni.combine().all().unis(run(tx, items, mine), store.findAll(tx, requests(items, others)))
                    .asTuple()
                    .chain(results -> settle(tx, items, mine, results.getItem1(), others, results.getItem2(), outcomes));
        });
    }

    private static Uni<List<Effect>> run(SqlConnection tx, List<Item> items, List<Integer> indices) {
        if (indices.isEmpty()) {
            return Uni.createFrom().item(List.of());
        }
        return Uni.join().all(indices.stream().map(i -> items.get(i).work().run(tx)).toList()).andFailFast();
    }

    /** Each delivery's outcome; DONE for the claimed keys that took effect, the others' claims dropped. */
    private Uni<ToCache> settle(SqlConnection tx, List<Item> items, List<Integer> mine, List<Effect> effects,
                                List<Integer> others, Map<String, DedupRecord> found, Outcome[] outcomes) {
        ToCache done = new ToCache();
        List<IdemRequest> refused = new ArrayList<>();
        for (int j = 0; j < mine.size(); j++) {
            int i = mine.get(j);
            IdemRequest request = items.get(i).request();
            outcomes[i] = Verdicts.ofEffect(effects.get(j));
            JsonObject stored = Verdicts.stored(effects.get(j));
            if (stored == null) {
                refused.add(request);
            } else {
                done.add(request, stored);
            }
        }
        ToCache fromDb = new ToCache();
        for (int i : others) {
            IdemRequest request = items.get(i).request();
            DedupRecord existing = found.get(DedupStore.batchKey(request));
            // no row: it was archived between the claim and the lookup; the delivery is tried again
            outcomes[i] = existing == null ? inFlight() : Verdicts.ofExisting(request, existing, inFlight());
            if (outcomes[i] instanceof Outcome.Duplicate duplicate) {
                fromDb.add(request, duplicate.result());
            }
        }
        return store.completeAll(tx, done.requests, done.results, clock.instant())
                .chain(() -> store.unclaimAll(tx, refused))
                .map(ignored -> done.with(fromDb));
    }

    private Outcome inFlight() {
        return Verdicts.inFlight(config);
    }

    private static List<IdemRequest> requests(List<Item> items, List<Integer> indices) {
        return indices.stream().map(i -> items.get(i).request()).toList();
    }

    /** Keys with their results, encoded once for both Postgres and Redis. */
    private static final class ToCache {
        final List<IdemRequest> requests = new ArrayList<>();
        final List<String> results = new ArrayList<>();

        void add(IdemRequest request, JsonObject result) {
            requests.add(request);
            results.add(JsonText.encode(result));
        }

        ToCache with(ToCache more) {
            requests.addAll(more.requests);
            results.addAll(more.results);
            return this;
        }
    }
}
