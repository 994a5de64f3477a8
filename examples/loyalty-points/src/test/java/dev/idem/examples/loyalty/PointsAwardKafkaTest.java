package dev.idem.examples.loyalty;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.pipeline.KafkaTestClient.ReadRecord;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** Kafka delivers at least once; an award must still add its points once, and poison must not block. */
@QuarkusTest
class PointsAwardKafkaTest {

    @Inject
    Db db;

    @Inject
    RedisDataSource redis;

    @AutoClose
    final KafkaTestClient kafka = new KafkaTestClient();

    @Test
    void theSameAwardDeliveredSixTimesAcrossPartitionsAndConcurrentlyIsAddedOnce() throws Exception {
        String user = "u-" + UUID.randomUUID();
        Map<String, Integer> awards = new LinkedHashMap<>();
        for (int i = 0; i < 20; i++) {
            awards.put("order-" + UUID.randomUUID(), 10 + i);
        }

        // six copies of every award, each copy from its own thread to its own partition, all at once
        deliver(6, copy -> copy % Awards.PARTITIONS, awards, key -> user);
        Awards.drain(kafka, db);

        long expected = awards.values().stream().mapToLong(Integer::longValue).sum();
        awards.keySet().forEach(key -> assertEquals(1, db.awards(key), key));
        assertEquals(awards.size(), db.count("SELECT count(*) FROM points_award WHERE user_id = $1", user));
        assertEquals(expected, db.balance(user));
        assertEquals(expected, balanceShown(user));
    }

    @Test
    void manyAwardsAreEachAddedOnceThoughRedisIsFlushedMidway() throws Exception {
        String run = "many-" + UUID.randomUUID();
        int users = 8;
        Map<String, Integer> awards = new LinkedHashMap<>();
        Map<String, String> owner = new HashMap<>();
        Map<String, Long> expected = new HashMap<>();
        for (int i = 0; i < 200; i++) {
            String key = run + "-award-" + i;
            String user = run + "-user-" + (i % users);
            int points = 1 + i % 9;
            awards.put(key, points);
            owner.put(key, user);
            expected.merge(user, (long) points, Long::sum);
        }

        // copies 1 to 3 on partitions 0, 1, 2; Redis forgets everything once half the awards are in
        deliver(3, copy -> copy, awards, owner::get);
        await().atMost(Awards.PATIENCE).until(() -> awardsOfRun(run) >= awards.size() / 2);
        assertTrue(redis.execute("DBSIZE").toLong() > 0, "the pipeline keeps its keys in Redis database 4");
        redis.execute("FLUSHDB");
        // copies 4 to 6 on partitions 3, 0, 1: only Postgres can tell them from new awards now
        deliver(3, copy -> (copy + 3) % Awards.PARTITIONS, awards, owner::get);
        Awards.drain(kafka, db);

        assertEquals(awards.size(), awardsOfRun(run));
        assertEquals(0, db.count("SELECT count(*) FROM (SELECT award_key FROM points_award WHERE award_key LIKE $1 "
                + "GROUP BY award_key HAVING count(*) > 1) AS twice", run + "-%"));
        expected.forEach((user, points) -> {
            assertEquals(points, db.balance(user), user);
            assertEquals(points, balanceShown(user), user);
        });
    }

    @Test
    void poisonGoesToTheDeadLetterTopicWithItsReasonAndThePartitionKeepsFlowing() {
        String marker = UUID.randomUUID().toString();
        String user = "poisoned-" + marker;
        Map<String, String> poison = new LinkedHashMap<>();
        poison.put("not-json", "this is not json " + marker);
        poison.put("array", "[\"" + marker + "\"]");
        poison.put("missing-user", "{\"awardKey\":\"" + marker + "\",\"points\":50}");
        poison.put("missing-points", "{\"awardKey\":\"" + marker + "\",\"userId\":\"" + user + "\"}");
        poison.put("points-as-text", "{\"awardKey\":\"" + marker + "\",\"userId\":\"" + user + "\",\"points\":\"50\"}");
        poison.put("negative-points", Awards.award(marker, user, -50));
        poison.put("empty", "");
        poison.put("tombstone", null);
        poison.forEach((kind, value) -> kafka.send(Awards.TOPIC, 0, "poison-" + marker + "-" + kind, value));
        String good = "after-poison-" + marker;
        kafka.send(Awards.TOPIC, 0, good, Awards.award(good, user, 7));

        await().atMost(Awards.PATIENCE).until(() -> db.awards(good) == 1);

        Map<String, ReadRecord> dead = kafka.readAll(Awards.DLQ).stream()
                .filter(record -> record.key() != null && record.key().startsWith("poison-" + marker))
                .collect(Collectors.toMap(ReadRecord::key, record -> record));
        assertEquals(poison.size(), dead.size(), dead.keySet().toString());
        poison.forEach((kind, value) -> {
            ReadRecord record = dead.get("poison-" + marker + "-" + kind);
            assertNotNull(record, kind);
            assertEquals(value, record.value(), "the record is kept as it came");
            assertNotNull(record.reason(), kind);
            assertTrue(record.reason().startsWith("POISON"), kind + ": " + record.reason());
        });
        assertEquals(0, db.awards(marker));
        assertEquals(7, balanceShown(user));
        assertEquals("POISON: member 'userId' is missing or null", dead.get("poison-" + marker + "-missing-user").reason());
        assertEquals("POISON: member 'points' is missing or null", dead.get("poison-" + marker + "-missing-points").reason());
    }

    @Test
    void anAwardWithMembersItsTypeDoesNotDeclareIsAddedOnce() {
        String marker = UUID.randomUUID().toString();
        String user = "evolved-" + marker;
        // a newer producer's record: three members this service does not know, read past as a tolerant reader does
        String newer = "{\"awardKey\":\"" + marker + "\",\"userId\":\"" + user + "\",\"points\":50,"
                + "\"campaign\":\"spring\",\"expiresAt\":\"2027-01-01T00:00:00Z\",\"tags\":[\"vip\"]}";
        kafka.send(Awards.TOPIC, 0, marker, newer);
        kafka.send(Awards.TOPIC, 1, marker, newer);

        await().atMost(Awards.PATIENCE).until(() -> balanceShown(user) == 50);
        assertEquals(1, db.awards(marker));
        assertTrue(kafka.readAll(Awards.DLQ).stream().noneMatch(record -> marker.equals(record.key())));
    }

    /**
     * {@code copies} producer threads released together; thread {@code c} sends every award, in
     * order, to partition {@code partitionOf(c)}.
     */
    private void deliver(int copies, IntFunction<Integer> partitionOf, Map<String, Integer> awards,
                         Function<String, String> userOf) throws Exception {
        ExecutorService producers = Executors.newFixedThreadPool(copies);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<?>> sends = new ArrayList<>();
            for (int copy = 0; copy < copies; copy++) {
                int partition = partitionOf.apply(copy);
                sends.add(producers.submit(() -> {
                    start.await();
                    awards.forEach((key, points) ->
                            kafka.send(Awards.TOPIC, partition, key, Awards.award(key, userOf.apply(key), points)));
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> send : sends) {
                send.get();
            }
        } finally {
            producers.shutdown();
        }
    }

    private long awardsOfRun(String run) {
        return db.count("SELECT count(*) FROM points_award WHERE award_key LIKE $1", run + "-%");
    }

    /** The balance as a user reads it. */
    static long balanceShown(String user) {
        return given().get("/points/" + user).then().statusCode(200).extract().jsonPath().getLong("points");
    }
}
