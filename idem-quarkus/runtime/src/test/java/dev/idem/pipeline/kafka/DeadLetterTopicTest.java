package dev.idem.pipeline.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.IncomingKafkaRecord;
import io.smallrye.reactive.messaging.kafka.commit.KafkaCommitHandler;
import io.smallrye.reactive.messaging.kafka.fault.KafkaFailureHandler;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

class DeadLetterTopicTest {

    private static final byte[] POISON = "{\"bizKey\":".getBytes(StandardCharsets.UTF_8);

    /** Sends refused until {@code refusals} ran out, then accepted; every record offered is kept. */
    private final class Broker extends DeadLetterProducer {
        final List<ProducerRecord<byte[], byte[]>> offered = new ArrayList<>();
        final List<Integer> acksWhenOffered = new ArrayList<>();
        private int refusals;

        Broker(int refusals) {
            super(Map.of());
            this.refusals = refusals;
        }

        @Override
        Uni<Void> send(ProducerRecord<byte[], byte[]> record) {
            offered.add(record);
            acksWhenOffered.add(acks.get());
            return refusals-- > 0 ? Uni.createFrom().failure(new IllegalStateException("broker away"))
                    : Uni.createFrom().voidItem();
        }
    }

    private final AtomicInteger acks = new AtomicInteger();

    private IncomingKafkaRecord<String, byte[]> consumed(KafkaFailureHandler handler) {
        RecordHeaders headers = new RecordHeaders();
        headers.add("trace", "t-1".getBytes(StandardCharsets.UTF_8));
        ConsumerRecord<String, byte[]> record = new ConsumerRecord<>("coupon-grants", 3, 41L, 0L,
                TimestampType.CREATE_TIME, 0, 0, "paid:o-1", POISON, headers, Optional.empty());
        KafkaCommitHandler commits = new KafkaCommitHandler() {
            @Override
            public <K, V> Uni<Void> handle(IncomingKafkaRecord<K, V> acked) {
                acks.incrementAndGet();
                return Uni.createFrom().voidItem();
            }
        };
        return new IncomingKafkaRecord<>(record, "coupon-grants$1", 0, commits, handler, false);
    }

    private static KafkaFailureHandler handler(DeadLetterProducer producer) {
        return new DeadLetterTopic(producer, Clock.systemUTC()).handlerFor("coupon-grants$1", "coupon-grants-dlq");
    }

    private static String header(ProducerRecord<byte[], byte[]> record, String name) {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }

    @Test
    void theRecordGoesAsItCameWithWhyAndWhereFrom() {
        Broker broker = new Broker(0);
        IncomingKafkaRecord<String, byte[]> record = consumed(handler(broker));

        record.nack(new IllegalArgumentException("POISON: not JSON")).toCompletableFuture().join();

        assertEquals(1, broker.offered.size());
        ProducerRecord<byte[], byte[]> dead = broker.offered.get(0);
        assertEquals("coupon-grants-dlq", dead.topic());
        assertNull(dead.partition());
        assertArrayEquals("paid:o-1".getBytes(StandardCharsets.UTF_8), dead.key());
        assertArrayEquals(POISON, dead.value());
        assertEquals("POISON: not JSON", header(dead, "dead-letter-reason"));
        assertEquals(IllegalArgumentException.class.getName(), header(dead, "dead-letter-exception-class-name"));
        assertEquals("coupon-grants", header(dead, "dead-letter-topic"));
        assertEquals("3", header(dead, "dead-letter-partition"));
        assertEquals("41", header(dead, "dead-letter-offset"));
        assertEquals("t-1", header(dead, "trace"));
        assertNull(dead.headers().lastHeader("dead-letter-cause"));
        assertEquals(1, acks.get(), "acked once the broker has it, so that its offset can be committed");
    }

    @Test
    void aRefusedDeadLetterIsSentAgainAndAckedOnlyOnceTaken() {
        Broker broker = new Broker(2);
        IncomingKafkaRecord<String, byte[]> record = consumed(handler(broker));

        var settled = record.nack(new IllegalArgumentException("KEY_REUSED")).toCompletableFuture();

        settled.orTimeout(10, TimeUnit.SECONDS).join();
        assertEquals(3, broker.offered.size(), "two refusals, then taken");
        assertEquals(List.of(0, 0, 0), broker.acksWhenOffered, "not acked while the broker refused it");
        assertEquals(1, acks.get());
    }
}
