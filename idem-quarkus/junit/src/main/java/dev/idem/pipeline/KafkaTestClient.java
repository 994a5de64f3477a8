package dev.idem.pipeline;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
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
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * A test's own Kafka client, to drive a service's {@code IdempotentConsumer} channels against the
 * real broker: it sends records as a gateway or another service would, and reads a topic back,
 * such as the {@code <topic>-dlq} where the extension puts what it refused.
 * <pre>{@code
 * try (KafkaTestClient kafka = new KafkaTestClient()) {                    // the service's broker
 *     kafka.send("gift-card-issues", null, "order-1", "{\"bizKey\":\"order-1\",...}");
 *     kafka.send("gift-card-issues", null, "order-2", "not json");
 *     // ...await the first one's effect in the database...
 *     List<KafkaTestClient.ReadRecord> dead = kafka.readAll("gift-card-issues-dlq");
 *     // the second is there, its reason() starting with "POISON: "
 * }
 * }</pre>
 *
 * <p>{@link #send} and {@link #sendBytes} wait for the broker's ack ({@code acks=all}), so that
 * when they return the record is in the topic: what the test does next cannot overtake it. A record sent to a partition is
 * consumed after every record sent there before it; a test that must know that everything it sent
 * was consumed sends a last record to every partition and waits for that one's effect.
 *
 * <p>One client holds one producer: open it once for a test class (or in try-with-resources) and
 * close it. It is safe to use from several threads. It needs no Quarkus: {@link
 * #KafkaTestClient(String)} takes the broker's address.
 */
public final class KafkaTestClient implements AutoCloseable {

    /** The header the extension's dead-letter topics give each record: why it is there. */
    public static final String DEAD_LETTER_REASON = "dead-letter-reason";

    private static final Duration ACK_WAIT = Duration.ofSeconds(30);
    private static final Duration READ_WAIT = Duration.ofSeconds(60);

    private final String bootstrapServers;
    private final KafkaProducer<String, byte[]> producer;

    /**
     * A client of the broker the running application uses: its {@code kafka.bootstrap.servers}.
     * In a {@code @QuarkusTest}, the service's own broker.
     */
    public KafkaTestClient() {
        this(ConfigProvider.getConfig().getValue("kafka.bootstrap.servers", String.class));
    }

    /** A client of the broker at {@code bootstrapServers}, such as {@code 127.0.0.1:9092}. */
    public KafkaTestClient(String bootstrapServers) {
        this.bootstrapServers = bootstrapServers;
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        this.producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
    }

    /**
     * Sends a record whose value is {@code value} in UTF-8, and waits for the broker's ack.
     *
     * @param partition the partition, or {@code null} to let the key choose it as a producer does
     * @param value     the value; {@code null} sends a tombstone
     * @return where the record landed: its topic, partition and offset
     * @throws IllegalStateException when the broker did not take it within 30 seconds
     */
    public RecordMetadata send(String topic, Integer partition, String key, String value) {
        return acked(topic, sendAsync(topic, partition, key, value));
    }

    /** The same as {@link #send} with a value of raw bytes, which need not be text (or be {@code null}). */
    public RecordMetadata sendBytes(String topic, Integer partition, String key, byte[] value) {
        return acked(topic, produce(topic, partition, key, value));
    }

    /**
     * Sends without waiting, for a test that wants many records in flight at once: the answer
     * completes with the broker's ack ({@code join()} it), or fails when there was none within 30
     * seconds. Records sent to one partition land in the order of the calls.
     */
    public CompletableFuture<RecordMetadata> sendAsync(String topic, Integer partition, String key, String value) {
        return produce(topic, partition, key, value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    private static RecordMetadata acked(String topic, CompletableFuture<RecordMetadata> sent) {
        try {
            return sent.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending to " + topic, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("the broker did not take a record for " + topic, e.getCause());
        }
    }

    private CompletableFuture<RecordMetadata> produce(String topic, Integer partition, String key, byte[] value) {
        CompletableFuture<RecordMetadata> acked = new CompletableFuture<>();
        producer.send(new ProducerRecord<>(topic, partition, key, value), (metadata, failure) -> {
            if (failure == null) {
                acked.complete(metadata);
            } else {
                acked.completeExceptionally(failure);
            }
        });
        return acked.orTimeout(ACK_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * A record read back by {@link #readAll}: its key, its value as UTF-8 text (either may be
     * {@code null}) and its {@value #DEAD_LETTER_REASON} header, which only the records of a
     * dead-letter topic carry: the disposition and a detail, such as {@code "POISON: ..."} (the
     * value could not be read or validated), {@code "KEY_REUSED: ..."} or {@code "WORK_FAILED: ..."}.
     */
    public record ReadRecord(String key, String value, String reason) {}

    /**
     * Every record of {@code topic} up to its end as it is now, from the beginning of every
     * partition, each partition's records in their order. It waits for no record to come: what was
     * acked before the call is there, what comes later is not, and a topic that does not exist
     * reads as empty. To wait for a record that a consumer is still to dead-letter, call it again
     * until it is there (Awaitility's {@code until}). The read commits no offset.
     *
     * @throws IllegalStateException when the topic could not be read to its end within 60 seconds
     */
    public List<ReadRecord> readAll(String topic) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "test-reader-" + UUID.randomUUID());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<ReadRecord> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer =
                     new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, ACK_WAIT).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, ACK_WAIT);
            long deadline = System.nanoTime() + READ_WAIT.toNanos();
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + topic + " to its end in " + READ_WAIT);
                }
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    Header reason = record.headers().lastHeader(DEAD_LETTER_REASON);
                    out.add(new ReadRecord(record.key(), text(record.value()), reason == null ? null : text(reason.value())));
                }
            }
        }
        return out;
    }

    /** Closes the producer, waiting up to 10 seconds for records still unacked. */
    @Override
    public void close() {
        producer.close(Duration.ofSeconds(10));
    }

    private static String text(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }
}
