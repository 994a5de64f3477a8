package dev.idem.extension.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.IdemRequest;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Item;
import dev.idem.pipeline.Layer;
import dev.idem.pipeline.Outcome;
import dev.idem.pipeline.PipelineConfig;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The batch form of the pipeline against real Postgres and Redis: every delivery of a batch gets
 * the outcome it would have had alone, whatever repeats it within the batch or across batches
 * that run at the same time.
 */
@QuarkusTest
class BatchTest {

    static final String SCOPE = "batch-test";

    /** A voucher per key; a code issued before turns the insert into a no-op. */
    static final String GRANT = """
            INSERT INTO vouchers (id, code, holder, amount) VALUES ($1, $2, $3, 1)
            ON CONFLICT ON CONSTRAINT vouchers_one_per_code DO NOTHING
            RETURNING id""";

    @Inject
    IdempotencyPipeline pipeline;

    @Inject
    Db db;

    @Inject
    RedisDataSource redis;

    @Inject
    PipelineConfig config;

    @Test
    void concurrentBatchesThatShareAndRepeatKeysWorkEachKeyOnce() {
        String user = "batch-" + UUID.randomUUID();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            keys.add(user + "-" + i);
        }
        // six batches at once, each with every key in its own order and the first twenty twice
        List<Uni<List<Outcome>>> batches = new ArrayList<>();
        Random random = new Random(7);
        for (int b = 0; b < 6; b++) {
            List<String> deliveries = new ArrayList<>(keys);
            deliveries.addAll(keys.subList(0, 20));
            Collections.shuffle(deliveries, random);
            batches.add(pipeline.executeAll(deliveries.stream().map(key -> grant(key, user)).toList()));
        }
        List<List<Outcome>> answered = Uni.join().all(batches).andFailFast().await().atMost(Duration.ofSeconds(60));

        assertEquals(keys.size(), db.count("SELECT count(*) FROM vouchers WHERE holder = $1", user));
        assertEquals(keys.size(), db.count("""
                SELECT count(*) FROM dedup_record d JOIN vouchers v ON v.code = d.key
                WHERE d.scope = $1 AND v.holder = $2 AND d.status = 'DONE'
                  AND d.result ->> 'voucherId' = v.id::text""", SCOPE, user));

        Map<String, List<Outcome>> byKey = new HashMap<>();
        for (int b = 0; b < batches.size(); b++) {
            List<Outcome> outcomes = answered.get(b);
            assertEquals(keys.size() + 20, outcomes.size());
            for (Outcome outcome : outcomes) {
                String voucherId = result(outcome).getString("voucherId");
                byKey.computeIfAbsent(db.string("SELECT code FROM vouchers WHERE id = $1::uuid", voucherId),
                        k -> new ArrayList<>()).add(outcome);
            }
        }
        assertEquals(keys.size(), byKey.size(), "every answer names the one voucher of its key");
        byKey.forEach((key, outcomes) -> {
            assertEquals(1, outcomes.stream().filter(Outcome.Processed.class::isInstance).count(), key);
            assertEquals(outcomes.size() - 1, outcomes.stream().filter(Outcome.Duplicate.class::isInstance).count(),
                    key);
        });
    }

    @Test
    void aRepeatedBatchIsAnsweredByRedisThenByTheDatabaseOnceRedisForgot() {
        String user = "batch-" + UUID.randomUUID();
        List<Item> items = List.of(grant(user + "-a", user), grant(user + "-b", user));
        List<Outcome> first = pipeline.executeAll(items).await().atMost(Duration.ofSeconds(30));
        first.forEach(outcome -> assertInstanceOf(Outcome.Processed.class, outcome));

        assertDuplicatesFrom(Layer.REDIS, first, pipeline.executeAll(items).await().atMost(Duration.ofSeconds(30)));
        redis.execute("FLUSHDB");
        assertDuplicatesFrom(Layer.DB, first, pipeline.executeAll(items).await().atMost(Duration.ofSeconds(30)));
        // the database's answer was written back to Redis
        assertDuplicatesFrom(Layer.REDIS, first, pipeline.executeAll(items).await().atMost(Duration.ofSeconds(30)));
    }

    @Test
    void aKeyReusedWithOtherContentIsToldApartFromItsNeighboursAndLeavesNothing() {
        String user = "batch-" + UUID.randomUUID();
        String key = user + "-reused";
        pipeline.executeAll(List.of(grant(key, user))).await().atMost(Duration.ofSeconds(30));

        // the other content's work writes a voucher of its own: nothing of it may remain
        IdemRequest other = new IdemRequest(SCOPE, key, IdemRequest.fingerprint("other content"));
        Item reused = new Item(other, grant(key + "-other", user).work());
        List<Outcome> outcomes = pipeline.executeAll(List.of(reused, grant(user + "-fresh", user)))
                .await().atMost(Duration.ofSeconds(30));
        assertInstanceOf(Outcome.KeyReused.class, outcomes.get(0));
        assertInstanceOf(Outcome.Processed.class, outcomes.get(1));
        // Redis forgot: the work runs, meets the key's record and is rolled back
        redis.execute("FLUSHDB");
        List<Outcome> again = pipeline.executeAll(List.of(reused, grant(user + "-fresh-2", user)))
                .await().atMost(Duration.ofSeconds(30));
        assertInstanceOf(Outcome.KeyReused.class, again.get(0));
        assertInstanceOf(Outcome.Processed.class, again.get(1));
        assertEquals(0, db.count("SELECT count(*) FROM vouchers WHERE code = $1", key + "-other"));
        assertEquals(3, db.count("SELECT count(*) FROM vouchers WHERE holder = $1", user));
    }

    @Test
    void aRefusalInAPollIsTheKeysAnswerToALaterDelivery() {
        String user = "batch-" + UUID.randomUUID();
        String refusedKey = user + "-not-yet";
        Item refused = new Item(request(refusedKey),
                tx -> Uni.createFrom().item(new Effect.Rejected("NOT_FOUND", "nothing to apply it to yet")));
        List<Outcome> outcomes = pipeline.executeAll(List.of(refused, grant(user + "-other", user)))
                .await().atMost(Duration.ofSeconds(30));

        Outcome.Rejected rejected = assertInstanceOf(Outcome.Rejected.class, outcomes.get(0));
        assertEquals("NOT_FOUND", rejected.reason());
        assertInstanceOf(Outcome.Processed.class, outcomes.get(1));
        assertEquals(1, db.count("SELECT count(*) FROM dedup_record WHERE scope = $1 AND key = $2 AND status = 'DONE'",
                SCOPE, refusedKey));
        assertEquals(1, db.count("SELECT count(*) FROM dedup_record WHERE scope = $1 AND key = $2 AND status = 'DONE'",
                SCOPE, user + "-other"));

        // a later delivery that could be applied now is still answered with the refusal, from the database too
        redis.execute("FLUSHDB");
        Outcome.Rejected again = assertInstanceOf(Outcome.Rejected.class, pipeline.executeAll(List.of(grant(refusedKey, user)))
                .await().atMost(Duration.ofSeconds(30)).get(0));
        assertEquals(Optional.of(Layer.DB), again.replayedBy());
        assertEquals(0, db.count("SELECT count(*) FROM vouchers WHERE code = $1", refusedKey));
    }

    @Test
    void batchMarksInRedisExpireAsSingleOnesDo() {
        String user = "batch-" + UUID.randomUUID();
        Item refused = new Item(request(user + "-refused"),
                tx -> Uni.createFrom().item(new Effect.Rejected("NOT_FOUND", "nothing to apply it to")));
        pipeline.executeAll(List.of(refused, grant(user + "-granted", user))).await().atMost(Duration.ofSeconds(30));

        String refusedKey = redisKey(user + "-refused");
        String grantedKey = redisKey(user + "-granted");
        long ttl = config.redisTtl(SCOPE).toMillis();
        // both are DONE with their answers (the refusal is the refused key's), for the scope's TTL
        for (String done : List.of(refusedKey, grantedKey)) {
            assertTrue(redis.value(String.class).get(done).startsWith("DONE "), done);
            long left = redis.key(String.class).pttl(done);
            assertTrue(left > ttl - 60_000 && left <= ttl, done + " expires in " + left + " ms, not about " + ttl);
        }
    }

    private static void assertDuplicatesFrom(Layer layer, List<Outcome> first, List<Outcome> again) {
        assertEquals(first.size(), again.size());
        for (int i = 0; i < first.size(); i++) {
            Outcome.Duplicate duplicate = assertInstanceOf(Outcome.Duplicate.class, again.get(i));
            assertEquals(layer, duplicate.layer());
            assertEquals(result(first.get(i)), duplicate.result(), "the first delivery's answer");
        }
    }

    private static JsonObject result(Outcome outcome) {
        if (outcome instanceof Outcome.Processed processed) {
            return processed.result();
        }
        return assertInstanceOf(Outcome.Duplicate.class, outcome).result();
    }

    /** Where Redis keeps a key of the scope ({@code <prefix>:<scope>:<key>}). */
    private String redisKey(String key) {
        return config.redisPrefix() + ":" + SCOPE + ":" + key;
    }

    private static IdemRequest request(String key) {
        return new IdemRequest(SCOPE, key, IdemRequest.fingerprint(key));
    }

    /** A voucher per key, inserted in the batch's transaction. */
    private static Item grant(String key, String user) {
        return new Item(request(key), tx -> {
            UUID voucherId = UUID.randomUUID();
            return tx.preparedQuery(GRANT).execute(Tuple.of(voucherId, key, user)).map(rows -> rows.size() == 1
                    ? new Effect.Processed(new JsonObject().put("voucherId", voucherId.toString()))
                    : new Effect.Duplicate(new JsonObject()));
        });
    }
}
