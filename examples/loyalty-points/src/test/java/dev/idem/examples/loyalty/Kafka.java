package dev.idem.examples.loyalty;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.ConfigProvider;

/** The test's own producer and dead-letter reader, against the same broker as the service. */
final class Kafka implements AutoCloseable {

    static final String TOPIC = "points-awards";
    static final String DLQ = "points-awards-dlq";
    static final int PARTITIONS = 4;
    static final Duration PATIENCE = Duration.ofSeconds(120);

    private final String bootstrap = ConfigProvider.getConfig().getValue("kafka.bootstrap.servers", String.class);
    private final KafkaProducer<String, byte[]> producer;

    Kafka() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
    }

    static String award(String awardKey, String userId, int points) {
        return "{\"awardKey\":\"" + awardKey + "\",\"userId\":\"" + userId + "\",\"points\":" + points + "}";
    }

    /** Sends and waits for the broker's ack. */
    void send(int partition, String key, String value) {
        byte[] bytes = value == null ? null : value.getBytes(StandardCharsets.UTF_8);
        try {
            producer.send(new ProducerRecord<>(TOPIC, partition, key, bytes)).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("could not produce to " + TOPIC, e);
        }
    }

    /**
     * A last award on every partition: once each is applied, everything produced there before it
     * has been consumed, since a partition is consumed in order.
     */
    void drain(Db db) {
        for (int partition = 0; partition < PARTITIONS; partition++) {
            String awardKey = "sentinel-" + UUID.randomUUID();
            send(partition, awardKey, award(awardKey, "sentinels", 1));
            Awaitility.await().atMost(PATIENCE).until(() -> db.awards(awardKey) == 1);
        }
    }

    /** A record read back from a dead-letter topic: its value as text and the reason header. */
    record Dead(String key, String value, String reason) {}

    /** Every record of the dead-letter topic up to its current end, from the beginning of every partition. */
    List<Dead> readDeadLetters() {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "test-reader-" + UUID.randomUUID());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<Dead> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer =
                     new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(DLQ, Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(DLQ, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + DLQ + " to its end");
                }
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    Header reason = record.headers().lastHeader("dead-letter-reason");
                    out.add(new Dead(record.key(),
                            record.value() == null ? null : new String(record.value(), StandardCharsets.UTF_8),
                            reason == null ? null : new String(reason.value(), StandardCharsets.UTF_8)));
                }
            }
        }
        return out;
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(10));
    }
}
