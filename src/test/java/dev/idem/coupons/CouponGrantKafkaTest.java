package dev.idem.coupons;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.pipeline.KafkaTestClient.ReadRecord;
import dev.idem.testing.Db;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** Kafka delivers at least once; a grant must still be granted once, and poison must not block. */
@QuarkusTest
class CouponGrantKafkaTest {

    static final String TOPIC = "coupon-grants";

    @Inject
    Db db;

    @AutoClose
    final KafkaTestClient kafka = new KafkaTestClient();
    final String user = "grants-" + UUID.randomUUID();

    @Test
    void theSameGrantProducedSixTimesAcrossPartitionsAndConcurrentlyGrantsOnce() throws Exception {
        List<String> bizKeys = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            bizKeys.add("paid:" + UUID.randomUUID());
        }
        ExecutorService producers = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> sends = new ArrayList<>();
            for (int copy = 0; copy < 6; copy++) {
                int partition = copy % Topics.PARTITIONS;
                sends.add(producers.submit(() ->
                        bizKeys.forEach(key -> kafka.send(TOPIC, partition, key, Topics.grant(key, user)))));
            }
            for (Future<?> send : sends) {
                send.get();
            }
        } finally {
            producers.shutdown();
        }

        Topics.drainGrants(kafka, db, user);

        for (String bizKey : bizKeys) {
            assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE source_key = $1", bizKey), bizKey);
        }
        List<String> sources = given().header("X-User-Id", user).get("/api/users/" + user + "/coupons")
                .then().statusCode(200).extract().jsonPath().getList("sourceKey", String.class);
        assertEquals(bizKeys.size(), sources.size());
        assertEquals(Set.copyOf(bizKeys), Set.copyOf(sources));
        given().header("X-User-Id", "someone-else").get("/api/users/" + user + "/coupons")
                .then().statusCode(404);
    }

    @Test
    void poisonGoesToTheDeadLetterTopicWithItsReasonAndThePartitionKeepsFlowing() {
        String marker = UUID.randomUUID().toString();
        Map<String, String> poison = Map.of(
                "not-json", "this is not json " + marker,
                "array", "[\"" + marker + "\"]",
                "missing-user", "{\"bizKey\":\"" + marker + "\",\"templateId\":\"PAY-5OFF\"}",
                "mistyped-user", "{\"bizKey\":\"" + marker + "\",\"userId\":42,\"templateId\":\"PAY-5OFF\"}",
                "unknown-member", "{\"bizKey\":\"" + marker + "\",\"userId\":\"u\",\"templateId\":\"T\",\"x\":1}",
                "empty", "");
        poison.forEach((kind, value) -> kafka.send(TOPIC, 0, "poison-" + marker + "-" + kind, value));
        kafka.send(TOPIC, 0, "poison-" + marker + "-tombstone", null);
        String valid = "after-poison-" + marker;
        kafka.send(TOPIC, 0, valid, Topics.grant(valid, user));

        Topics.awaitCoupon(db, valid);

        Map<String, ReadRecord> dead = kafka.readAll(TOPIC + "-dlq").stream()
                .filter(record -> record.key() != null && record.key().startsWith("poison-" + marker))
                .collect(Collectors.toMap(ReadRecord::key, record -> record));
        assertEquals(poison.size() + 1, dead.size(), dead.keySet().toString());
        poison.forEach((kind, value) -> {
            ReadRecord record = dead.get("poison-" + marker + "-" + kind);
            assertNotNull(record, kind);
            assertEquals(value, record.value(), "the record is kept as it came");
            assertNotNull(record.reason(), kind);
            assertTrue(record.reason().startsWith("POISON"), record.reason());
        });
        assertEquals(0, db.count("SELECT count(*) FROM coupons WHERE source_key = $1", marker));
    }
}
