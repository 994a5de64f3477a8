package org.acme;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/** Against the real servers: PostgreSQL (giftcards_test), Redis and Kafka of ./idem services up. */
@QuarkusTest
class GiftCardIssuesTest {

    static final String TOPIC = "gift-card-issues";
    static final Duration PATIENCE = Duration.ofSeconds(60);

    @Inject
    Pool pool;

    @Inject
    MeterRegistry registry;

    @ConfigProperty(name = "kafka.bootstrap.servers")
    String bootstrap;

    @Test
    void threeDeliveriesOfOneIssueMakeOneCard() throws Exception {
        String bizKey = "order-" + UUID.randomUUID();
        double duplicatesBefore = duplicates();

        for (int i = 0; i < 3; i++) {
            send(bizKey, "{\"bizKey\":\"" + bizKey + "\",\"userId\":\"u1\",\"amountCents\":5000}");
        }

        await("two copies known by their key").atMost(PATIENCE).until(() -> duplicates() >= duplicatesBefore + 2);
        assertEquals(1, cards(bizKey));
    }

    @Test
    void aRecordThatCannotBeReadGoesToTheDeadLetterTopic() throws Exception {
        String bizKey = "poison-" + UUID.randomUUID();
        send(bizKey, "{\"bizKey\":\"" + bizKey + "\",\"userId\":\"u1\",\"amountCents\":\"lots\"}");

        try (KafkaConsumer<String, String> dlq = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, "test-" + bizKey,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                new StringDeserializer(), new StringDeserializer())) {
            dlq.subscribe(List.of(TOPIC + "-dlq"));
            List<String> keys = new ArrayList<>();
            await("the record in " + TOPIC + "-dlq").atMost(PATIENCE).pollInSameThread().until(() -> {
                dlq.poll(Duration.ofMillis(500)).forEach(record -> keys.add(record.key()));
                return keys.contains(bizKey);
            });
        }
        assertEquals(0, cards(bizKey));
    }

    private void send(String key, String value) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap), new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(TOPIC, key, value)).get();
        }
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
