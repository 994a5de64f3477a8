package dev.idem.examples.loyalty;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.hamcrest.Matchers;
import org.junit.jupiter.api.Test;

/** POST /points/redemptions behind Idempotency-Key: once per (user, key), whatever the client repeats. */
@QuarkusTest
class RedemptionResourceTest {

    static final String PROBLEM = "application/problem+json";

    @Inject
    Db db;

    @Inject
    RedisDataSource redis;

    final String user = "redeemer-" + UUID.randomUUID();

    @Test
    void theSameKeyAndBodyReplaysTheFirstAnswerAndAnotherBodyIs422() {
        fund(100);
        String key = UUID.randomUUID().toString();

        Response first = redeem(key, "{\"points\": 30}");
        first.then().statusCode(201).contentType(ContentType.JSON);
        assertNull(first.header("Idempotent-Replayed"));
        assertEquals(30, first.jsonPath().getInt("points"));
        assertEquals(70, first.jsonPath().getLong("balance"));
        assertNotNull(first.jsonPath().getString("redemptionId"));

        Response again = redeem(key, "{\"points\": 30}");
        again.then().statusCode(201).contentType(ContentType.JSON).header("Idempotent-Replayed", "true");
        assertEquals(first.asString(), again.asString());

        redeem(key, "{\"points\": 31}").then().statusCode(422).contentType(PROBLEM)
                .body("code", Matchers.equalTo("IDEMPOTENCY_KEY_REUSED"));

        assertEquals(1, redemptions(key));
        assertEquals(70, PointsAwardKafkaTest.balanceShown(user));
    }

    /**
     * The key's Redis entry is gone (its TTL passed, Redis was flushed or failed over): the copy is
     * claimed as new and its work runs, meets the redemption's own unique key, and the key's record
     * answers. The first answer again, never a 5xx.
     */
    @Test
    void aReplayAfterRedisLostTheKeyIsStillTheFirstAnswer() {
        fund(100);
        String key = UUID.randomUUID().toString();
        String redisKey = "loyalty-points:" + PointsService.REDEMPTION_SCOPE + ":" + user + ":" + key;

        Response first = redeem(key, "{\"points\": 30}");
        first.then().statusCode(201);
        await().atMost(Awards.PATIENCE).until(() -> String.valueOf(redis.value(String.class).get(redisKey)).startsWith("DONE"));
        redis.key().del(redisKey);

        Response again = redeem(key, "{\"points\": 30}");
        again.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertEquals(first.asString(), again.asString());
        assertEquals(1, redemptions(key));
        assertEquals(70, PointsAwardKafkaTest.balanceShown(user));
    }

    @Test
    void twentyConcurrentRequestsWithOneKeyRedeemOnce() throws Exception {
        fund(100);
        String key = UUID.randomUUID().toString();

        ExecutorService clients = Executors.newFixedThreadPool(20);
        CountDownLatch start = new CountDownLatch(1);
        List<Response> answers = new ArrayList<>();
        try {
            List<Future<Response>> sent = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                sent.add(clients.submit(() -> {
                    start.await();
                    return redeem(key, "{\"points\": 40}");
                }));
            }
            start.countDown();
            for (Future<Response> answer : sent) {
                answers.add(answer.get());
            }
        } finally {
            clients.shutdown();
        }

        List<Response> processed = answers.stream()
                .filter(a -> a.statusCode() == 201 && a.header("Idempotent-Replayed") == null).toList();
        assertEquals(1, processed.size(), "exactly one request redeemed");
        String body = processed.get(0).asString();
        for (Response answer : answers) {
            if (answer.statusCode() == 201) {
                assertEquals(body, answer.asString(), "a replay answers what the first request answered");
            } else {
                assertEquals(409, answer.statusCode(), answer.asString());
                assertEquals(PROBLEM, answer.contentType());
                assertEquals("IDEMPOTENCY_KEY_IN_FLIGHT", answer.jsonPath().getString("code"));
                assertTrue(Integer.parseInt(answer.header("Retry-After")) >= 1, answer.header("Retry-After"));
            }
        }
        assertEquals(1, redemptions(key));
        assertEquals(60, db.balance(user));

        Response later = redeem(key, "{\"points\": 40}");
        later.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertEquals(body, later.asString());
        assertEquals(60, PointsAwardKafkaTest.balanceShown(user));
    }

    @Test
    void notEnoughPointsIsTheKeysAnswerEvenOncePointsArriveAndANewKeyRedeems() {
        fund(10);
        String key = UUID.randomUUID().toString();

        Response refused = redeem(key, "{\"points\": 50}");
        refused.then().statusCode(409).contentType(PROBLEM)
                .body("code", Matchers.equalTo("INSUFFICIENT_POINTS"))
                .body("status", Matchers.equalTo(409));
        assertEquals(0, redemptions(key));
        assertEquals(10, PointsAwardKafkaTest.balanceShown(user));

        fund(100);
        Response again = redeem(key, "{\"points\": 50}");
        again.then().statusCode(409).header("Idempotent-Replayed", "true");
        assertEquals(refused.asString(), again.asString(), "the key's first answer, though the points are there now");
        assertEquals(0, redemptions(key));

        String newKey = UUID.randomUUID().toString();
        Response redeemed = redeem(newKey, "{\"points\": 50}");
        redeemed.then().statusCode(201);
        assertNull(redeemed.header("Idempotent-Replayed"));
        assertEquals(60, redeemed.jsonPath().getLong("balance"));
        assertEquals(1, redemptions(newKey));
        assertEquals(60, PointsAwardKafkaTest.balanceShown(user));
    }

    @Test
    void badInputIs400ProblemJsonAndRedeemsNothing() {
        fund(100);
        Map<String, String> bodies = Map.of(
                "not JSON", "points: 30",
                "empty", "",
                "no points", "{}",
                "points as text", "{\"points\": \"30\"}",
                "fractional points", "{\"points\": 1.5}",
                "zero points", "{\"points\": 0}",
                "unknown member", "{\"points\": 30, \"note\": \"x\"}",
                "points twice", "{\"points\": 30, \"points\": 40}",
                "an array", "[30]");
        bodies.forEach((what, body) -> redeem(UUID.randomUUID().toString(), body)
                .then().statusCode(400).contentType(PROBLEM)
                .body("code", Matchers.equalTo("BAD_REQUEST"))
                .body("detail", Matchers.notNullValue()));

        given().header("X-User-Id", user).contentType(ContentType.JSON).body("{\"points\": 30}")
                .post("/points/redemptions")
                .then().statusCode(400).contentType(PROBLEM)
                .body("code", Matchers.equalTo("IDEMPOTENCY_KEY_MISSING"));
        given().header("Idempotency-Key", "k").contentType(ContentType.JSON).body("{\"points\": 30}")
                .post("/points/redemptions")
                .then().statusCode(401).contentType(PROBLEM)
                .body("code", Matchers.equalTo("CALLER_MISSING"));
        redeem("k".repeat(256), "{\"points\": 30}").then().statusCode(400).contentType(PROBLEM);
        given().get("/points/not a user id!").then().statusCode(400).contentType(PROBLEM);

        assertEquals(0, db.count("SELECT count(*) FROM points_redemption WHERE user_id = $1", user));
        assertEquals(100, PointsAwardKafkaTest.balanceShown(user));
    }

    @Test
    void aUserWithoutPointsHasABalanceOfZero() {
        given().get("/points/" + user).then().statusCode(200).contentType(ContentType.JSON)
                .body("userId", Matchers.equalTo(user))
                .body("points", Matchers.equalTo(0));
    }

    private Response redeem(String key, String body) {
        RequestSpecification request = given().header("X-User-Id", user).header("Idempotency-Key", key)
                .contentType(ContentType.JSON).body(body);
        return request.post("/points/redemptions");
    }

    /** Points arrive the way they do in production: an award on points-awards. */
    private void fund(int points) {
        long before = db.balance(user);
        String awardKey = "fund-" + UUID.randomUUID();
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            kafka.send(Awards.TOPIC, 0, awardKey, Awards.award(awardKey, user, points));
        }
        await().atMost(Awards.PATIENCE).until(() -> PointsAwardKafkaTest.balanceShown(user) == before + points);
    }

    private long redemptions(String key) {
        return db.count("SELECT count(*) FROM points_redemption WHERE user_id = $1 AND idempotency_key = $2",
                user, key);
    }
}
