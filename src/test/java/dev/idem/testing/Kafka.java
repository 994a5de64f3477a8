package dev.idem.testing;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.ConfigProvider;

/** The test's own producer and dead-letter reader, against the same broker as the service. */
public final class Kafka implements AutoCloseable {

    public static final int PARTITIONS = 4;

    private final String bootstrap = ConfigProvider.getConfig().getValue("kafka.bootstrap.servers", String.class);
    private final KafkaProducer<String, byte[]> producer;

    public Kafka() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
    }

    /** Sends and waits for the broker's ack; {@code partition} null lets the key decide. */
    public void send(String topic, Integer partition, String key, String value) {
        sendBytes(topic, partition, key, value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    /** The same with raw bytes, which need not be text. */
    public void sendBytes(String topic, Integer partition, String key, byte[] bytes) {
        try {
            producer.send(new ProducerRecord<>(topic, partition, key, bytes)).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("could not produce to " + topic, e);
        }
    }

    /** A record read back: its value as text and, on a dead-letter topic, the reason header. */
    public record Record(String key, String value, String reason) {}

    public static String grant(String bizKey, String userId) {
        return "{\"bizKey\":\"" + bizKey + "\",\"userId\":\"" + userId + "\",\"templateId\":\"PAY-5OFF\"}";
    }

    public void awaitCoupon(Db db, String bizKey) {
        Awaitility.await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200))
                .until(() -> db.count("SELECT count(*) FROM coupons WHERE source_key = $1", bizKey) == 1);
    }

    /**
     * A last grant on every partition of coupon-grants: once each has its coupon, everything
     * produced there before it has been consumed, since a partition is consumed in order.
     */
    public void drainGrants(Db db, String userId) {
        for (int partition = 0; partition < PARTITIONS; partition++) {
            String bizKey = "sentinel-" + UUID.randomUUID();
            send("coupon-grants", partition, bizKey, grant(bizKey, userId + "-sentinel"));
            awaitCoupon(db, bizKey);
        }
    }

    /**
     * Every record of {@code topic} up to its current end, read from the beginning of every
     * partition: deterministic, no waiting for records that may or may not come.
     */
    public List<Record> readAll(String topic) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "test-reader-" + UUID.randomUUID());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<Record> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer =
                     new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).collect(Collectors.toList());
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + topic + " to its end");
                }
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    var reason = record.headers().lastHeader("dead-letter-reason");
                    out.add(new Record(record.key(),
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
