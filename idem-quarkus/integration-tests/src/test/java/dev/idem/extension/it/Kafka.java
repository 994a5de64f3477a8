package dev.idem.extension.it;

import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/** The tests' own producer, offset reader and dead-letter reader, against the application's broker. */
final class Kafka implements AutoCloseable {

    static final int PARTITIONS = 4;
    static final Duration PATIENCE = Duration.ofSeconds(120);

    /** An {@code @Incoming} channel as application.properties configures it. */
    record Channel(String name, String topic, String group) {
        static Channel of(String name) {
            Config config = ConfigProvider.getConfig();
            String prefix = "mp.messaging.incoming." + name + ".";
            return new Channel(name, config.getValue(prefix + "topic", String.class),
                    config.getValue(prefix + "group.id", String.class));
        }

        /** The dead-letter topic the extension gives the channel. */
        String deadLetterTopic() {
            return topic + "-dlq";
        }
    }

    /** A record read back from a dead-letter topic: its key, its value as text and why it is there. */
    record Dead(String key, String value, String reason) {}

    private final String bootstrap = ConfigProvider.getConfig().getValue("kafka.bootstrap.servers", String.class);
    private final KafkaProducer<String, byte[]> producer;
    private final Admin admin;

    Kafka() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    /** Sends and waits for the broker's ack: where the record landed. */
    RecordMetadata send(Channel channel, int partition, String key, String value) {
        return acked(sendAsync(channel, partition, key, value));
    }

    Future<RecordMetadata> sendAsync(Channel channel, int partition, String key, String value) {
        return producer.send(new ProducerRecord<>(channel.topic(), partition, key,
                value == null ? null : value.getBytes(StandardCharsets.UTF_8)));
    }

    static RecordMetadata acked(Future<RecordMetadata> sent) {
        try {
            return sent.get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("the broker did not take a record", e);
        }
    }

    /**
     * Waits until the channel's group committed offsets past every one of {@code records}: each
     * was acked (applied, judged a duplicate, or dead-lettered), and every record before it on its
     * partition too.
     */
    void awaitSettled(Channel channel, List<RecordMetadata> records) {
        await().atMost(PATIENCE).until(() -> {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(channel.group())
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            return records.stream().allMatch(record -> {
                OffsetAndMetadata offset = committed.get(new TopicPartition(record.topic(), record.partition()));
                return offset != null && offset.offset() > record.offset();
            });
        });
    }

    void awaitSettled(Channel channel, RecordMetadata record) {
        awaitSettled(channel, List.of(record));
    }

    /** The records of the channel's dead-letter topic whose key starts with {@code prefix}, read to its current end. */
    List<Dead> deadLetters(Channel channel, String prefix) {
        String topic = channel.deadLetterTopic();
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "idem-it-reader-" + UUID.randomUUID());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<Dead> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer =
                     new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + topic + " to its end");
                }
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    if (record.key() == null || !record.key().startsWith(prefix)) {
                        continue;
                    }
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
        admin.close(Duration.ofSeconds(10));
    }
}
