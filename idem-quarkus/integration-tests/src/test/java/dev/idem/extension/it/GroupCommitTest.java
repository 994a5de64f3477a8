package dev.idem.extension.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.IdemRequest;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Outcome;
import dev.idem.pipeline.Work;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Deliveries that wait on one event loop while its transaction is busy (group commit): copies of
 * one key never share a transaction, each key is worked once, and every copy answers what the
 * first stored. Which deliveries share which transaction is the unit tests' to pin down.
 */
@QuarkusTest
class GroupCommitTest {

    static final String SCOPE = "group-commit-test";

    @Inject
    IdempotencyPipeline pipeline;

    @Inject
    Pool pool;

    @Inject
    Vertx vertx;

    /** The transaction each first copy of a key ran in. */
    final Map<String, Long> transactions = new ConcurrentHashMap<>();

    @Test
    void deliveriesWaitingTogetherShareATransactionAndCopiesOfAKeyComeOnce() throws Exception {
        String user = "group-commit-" + UUID.randomUUID();
        List<String> keys = List.of(user + "-a", user + "-b", user + "-c", user + "-d");
        CompletableFuture<Void> gate = new CompletableFuture<>();
        List<CompletableFuture<Outcome>> answers = new ArrayList<>();
        CompletableFuture<Void> submitted = new CompletableFuture<>();

        vertx.getOrCreateContext().runOnContext(ignored -> {
            // two deliveries hold the loop's transactions until the gate opens
            for (int i = 0; i < 2; i++) {
                answers.add(pipeline.execute(request(user + "-blocker-" + i),
                        tx -> Uni.createFrom().completionStage(gate).replaceWith(new Effect.Processed(new JsonObject())))
                        .subscribeAsCompletionStage());
            }
            // every key twice: the copy finds the first's PROCESSING marker in Redis
            for (String key : keys) {
                answers.add(pipeline.execute(request(key), grant(key, user)).subscribeAsCompletionStage());
                answers.add(pipeline.execute(request(key), grant(key, user)).subscribeAsCompletionStage());
            }
            submitted.complete(null);
        });
        submitted.get();
        gate.complete(null);

        List<Outcome> outcomes = new ArrayList<>();
        for (CompletableFuture<Outcome> answer : answers) {
            outcomes.add(answer.get(30, TimeUnit.SECONDS));
        }
        for (int k = 0; k < keys.size(); k++) {
            // either copy may be first: the two groups run at once, and the unique keys decide
            List<Outcome> copies = List.of(outcomes.get(2 + 2 * k), outcomes.get(3 + 2 * k));
            Outcome.Processed first = (Outcome.Processed) copies.stream()
                    .filter(Outcome.Processed.class::isInstance).findFirst()
                    .orElseThrow(() -> new AssertionError("no first delivery of " + copies));
            Outcome.Duplicate copy = (Outcome.Duplicate) copies.stream()
                    .filter(Outcome.Duplicate.class::isInstance).findFirst()
                    .orElseThrow(() -> new AssertionError("no duplicate among " + copies));
            assertEquals(first.result(), copy.result(), "the duplicate answers what the first stored");
        }
        Db db = new Db(pool);
        assertEquals(keys.size(), db.count("SELECT count(*) FROM vouchers WHERE holder = $1", user));
        assertEquals(keys.size(), transactions.size(), "each key's voucher was written once");
    }

    private static IdemRequest request(String key) {
        return new IdemRequest(SCOPE, key, IdemRequest.fingerprint(key));
    }

    /** A voucher for the key, noting the transaction it was written in. */
    private Work grant(String key, String user) {
        return tx -> transactionOf(tx).chain(id -> {
            UUID voucherId = UUID.randomUUID();
            return tx.preparedQuery(BatchTest.GRANT).execute(Tuple.of(voucherId, key, user)).map(rows -> {
                if (rows.size() == 1) {
                    transactions.put(key, id);
                    return new Effect.Processed(new JsonObject().put("voucherId", voucherId.toString()));
                }
                return new Effect.Duplicate(new JsonObject());
            });
        });
    }

    private static Uni<Long> transactionOf(SqlConnection tx) {
        return tx.query("SELECT txid_current() AS id").execute().map(rows -> rows.iterator().next().getLong("id"));
    }
}
