package dev.idem.ops;

import dev.idem.ops.DeadLetter.Position;
import io.smallrye.common.annotation.Identifier;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads dead-letter topics for the admin endpoints, each call with a consumer of its own that is
 * assigned the partitions: no group, no commits, so the service's consumers never notice it.
 * Every call reads up to the topic's end as it was when the call began. Blocking: callers run it
 * on a worker thread.
 */
@ApplicationScoped
class DeadLetterReader {

    private static final Duration POLL = Duration.ofMillis(200);

    /** The newest dead letters of a topic, newest first, and how many records the topic holds. */
    record Page(long total, List<DeadLetter> newest) {}

    private final Map<String, Object> kafka;
    private final OpsConfig.DeadLetters config;
    private final AtomicLong clients = new AtomicLong();

    DeadLetterReader(@Identifier("default-kafka-broker") Map<String, Object> kafka, OpsConfig config) {
        this.kafka = kafka;
        this.config = config.deadLetters();
    }

    /**
     * The newest {@code limit} records: the newest of the whole topic are among the last
     * {@code limit} of each partition, so only those are read, and only {@code limit} are kept
     * while reading, however large the topic.
     */
    Page newest(String topic, int limit) {
        try (KafkaConsumer<byte[], byte[]> consumer = open()) {
            List<TopicPartition> partitions = partitions(consumer, topic);
            if (partitions.isEmpty()) {
                return new Page(0, List.of());
            }
            consumer.assign(partitions);
            Map<TopicPartition, Long> begin = consumer.beginningOffsets(partitions, config.readTimeout());
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, config.readTimeout());
            long total = 0;
            for (TopicPartition partition : partitions) {
                total += end.get(partition) - begin.get(partition);
                consumer.seek(partition, Math.max(begin.get(partition), end.get(partition) - limit));
            }
            // the head is the oldest kept, the first to give way to a newer one
            PriorityQueue<DeadLetter> kept = new PriorityQueue<>(DeadLetter.NEWEST_FIRST.reversed());
            Cursor cursor = new Cursor(consumer, end);
            for (List<DeadLetter> batch = cursor.next(); !batch.isEmpty(); batch = cursor.next()) {
                for (DeadLetter letter : batch) {
                    kept.add(letter);
                    if (kept.size() > limit) {
                        kept.poll();
                    }
                }
            }
            List<DeadLetter> newest = new ArrayList<>(kept);
            newest.sort(DeadLetter.NEWEST_FIRST);
            return new Page(total, newest);
        }
    }

    /** The dead letter at {@code position}; empty when the topic holds none there (any more). */
    Optional<DeadLetter> find(String topic, Position position) {
        try (KafkaConsumer<byte[], byte[]> consumer = open()) {
            TopicPartition partition = new TopicPartition(topic, position.partition());
            if (!partitions(consumer, topic).contains(partition)) {
                return Optional.empty();
            }
            consumer.assign(List.of(partition));
            long begin = consumer.beginningOffsets(List.of(partition), config.readTimeout()).get(partition);
            long end = consumer.endOffsets(List.of(partition), config.readTimeout()).get(partition);
            if (position.offset() < begin || position.offset() >= end) {
                return Optional.empty();
            }
            consumer.seek(partition, position.offset());
            Cursor cursor = new Cursor(consumer, Map.of(partition, position.offset() + 1));
            for (List<DeadLetter> batch = cursor.next(); !batch.isEmpty(); batch = cursor.next()) {
                for (DeadLetter letter : batch) {
                    if (letter.position().equals(position)) {
                        return Optional.of(letter);
                    }
                }
            }
            return Optional.empty();
        }
    }

    /**
     * The whole topic, from the beginning to its end as it is now, a batch at a time: records that
     * arrive meanwhile (dead letters returning from this very re-drive among them) are not read.
     */
    Scan scan(String topic) {
        KafkaConsumer<byte[], byte[]> consumer = open();
        try {
            List<TopicPartition> partitions = partitions(consumer, topic);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            return new Scan(consumer, new Cursor(consumer, consumer.endOffsets(partitions, config.readTimeout())));
        } catch (RuntimeException e) {
            consumer.close();
            throw e;
        }
    }

    /** A scan in progress; one thread at a time, and closed when done. */
    static final class Scan implements AutoCloseable {

        private final KafkaConsumer<byte[], byte[]> consumer;
        private final Cursor cursor;

        private Scan(KafkaConsumer<byte[], byte[]> consumer, Cursor cursor) {
            this.consumer = consumer;
            this.cursor = cursor;
        }

        /** The next dead letters, in order within each partition; empty once the end is reached. */
        List<DeadLetter> next() {
            return cursor.next();
        }

        @Override
        public void close() {
            consumer.close();
        }
    }

    /** Reads assigned partitions up to given end offsets (exclusive); a partition at its end is paused. */
    private final class Cursor {

        private final KafkaConsumer<byte[], byte[]> consumer;
        private final Map<TopicPartition, Long> end;

        Cursor(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> end) {
            this.consumer = consumer;
            this.end = new HashMap<>(end);
        }

        List<DeadLetter> next() {
            long deadline = System.nanoTime() + config.readTimeout().toNanos();
            while (true) {
                List<TopicPartition> done = end.keySet().stream()
                        .filter(partition -> consumer.position(partition, config.readTimeout()) >= end.get(partition))
                        .toList();
                if (!done.isEmpty()) {
                    consumer.pause(done);
                    done.forEach(end::remove);
                }
                if (end.isEmpty()) {
                    return List.of();
                }
                if (System.nanoTime() > deadline) {
                    throw new TimeoutException("could not read " + end.keySet() + " to its end within "
                            + config.readTimeout());
                }
                List<DeadLetter> batch = new ArrayList<>();
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                    Long last = end.get(new TopicPartition(record.topic(), record.partition()));
                    if (last != null && record.offset() < last) {
                        batch.add(DeadLetter.of(record));
                    }
                }
                if (!batch.isEmpty()) {
                    return batch;
                }
            }
        }
    }

    private List<TopicPartition> partitions(KafkaConsumer<byte[], byte[]> consumer, String topic) {
        return consumer.partitionsFor(topic, config.readTimeout()).stream()
                .map(info -> new TopicPartition(topic, info.partition()))
                .toList();
    }

    /** The service's Kafka settings, without its group: this consumer joins none and commits nothing. */
    private KafkaConsumer<byte[], byte[]> open() {
        Map<String, Object> props = new HashMap<>(kafka);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "idem-dead-letter-reader-" + clients.incrementAndGet());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        // a channel without dead letters yet has no topic: reading must not make one
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(config.batchSize()));
        props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Long.toString(config.readTimeout().toMillis()));
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }
}
