package org.acme;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against the real servers: PostgreSQL (giftcards_test), Redis and Kafka of ./idem services up. */
@QuarkusTest
class GiftCardIssuesTest {

    static final Duration PATIENCE = Duration.ofSeconds(60);

    /** The channel's topic in the test profile: the tests' own, apart from a running service's. */
    @ConfigProperty(name = "mp.messaging.incoming.gift-card-issues.topic")
    String topic;

    @Inject
    Pool pool;

    @Inject
    MeterRegistry registry;

    /** The test kit's client of the service's broker (idem-quarkus-junit): sends, and reads a topic back. */
    KafkaTestClient kafka;

    @BeforeEach
    void connect() {
        kafka = new KafkaTestClient();
    }

    @AfterEach
    void disconnect() {
        kafka.close();
    }

    @Test
    void threeDeliveriesOfOneIssueMakeOneCard() {
        String bizKey = "order-" + UUID.randomUUID();
        double duplicatesBefore = duplicates();

        for (int i = 0; i < 3; i++) {
            kafka.send(topic, null, bizKey, "{\"bizKey\":\"" + bizKey + "\",\"userId\":\"u1\",\"amountCents\":5000}");
        }

        await("two copies known by their key").atMost(PATIENCE).until(() -> duplicates() >= duplicatesBefore + 2);
        assertEquals(1, cards(bizKey));
    }

    @Test
    void aRecordThatCannotBeReadGoesToTheDeadLetterTopic() {
        String bizKey = "poison-" + UUID.randomUUID();
        String value = "{\"bizKey\":\"" + bizKey + "\",\"userId\":\"u1\",\"amountCents\":\"lots\"}";
        kafka.send(topic, null, bizKey, value);

        KafkaTestClient.ReadRecord dead = await("the record in " + topic + "-dlq").atMost(PATIENCE)
                .until(() -> kafka.readAll(topic + "-dlq").stream()
                        .filter(record -> bizKey.equals(record.key())).findFirst(), Optional::isPresent)
                .get();
        assertEquals(value, dead.value(), "kept as it came");
        assertTrue(dead.reason().startsWith("POISON"), dead.reason());
        assertEquals(0, cards(bizKey));
    }

    @Test
    void aRecordWithMembersTheTypeDoesNotDeclareIsIssuedAndOneWithoutAUserGoesToTheDeadLetterTopic() {
        String newer = "order-" + UUID.randomUUID();
        // a newer producer's record: three members the service does not know, which a consumer reads past
        kafka.send(topic, null, newer, "{\"bizKey\":\"" + newer + "\",\"userId\":\"u1\",\"amountCents\":5000,"
                + "\"currency\":\"EUR\",\"channel\":\"web\",\"tags\":[\"spring\"]}");
        String incomplete = "order-" + UUID.randomUUID();
        kafka.send(topic, null, incomplete, "{\"bizKey\":\"" + incomplete + "\",\"amountCents\":5000}");

        await("the newer record's card").atMost(PATIENCE).until(() -> cards(newer) == 1);
        KafkaTestClient.ReadRecord dead = await("the incomplete record in " + topic + "-dlq").atMost(PATIENCE)
                .until(() -> kafka.readAll(topic + "-dlq").stream()
                        .filter(record -> incomplete.equals(record.key())).findFirst(), Optional::isPresent)
                .get();
        assertEquals("POISON: member 'userId' is missing or null", dead.reason());
        assertEquals(0, cards(incomplete));
    }

    private long cards(String bizKey) {
        return pool.preparedQuery("SELECT count(*) FROM gift_card WHERE biz_key = $1")
                .execute(Tuple.of(bizKey)).await().indefinitely().iterator().next().getLong(0);
    }

    /** Copies the pipeline knew by their key (in Redis or in its record), before the card table's unique key. */
    private double duplicates() {
        return registry.find("idem.pipeline.duplicates").tag("scope", "gift-card-issue").counters().stream()
                .filter(counter -> !"state".equals(counter.getId().getTag("layer")))
                .mapToDouble(Counter::count).sum();
    }
}
