package dev.idem.pipeline.kafka;

import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The one producer of every channel's dead letters, made on the first of them with the service's
 * {@code kafka.*} settings, waiting for every in-sync replica and idempotent, so that a dead letter
 * the broker acknowledged survives a broker's loss and a retry after a lost acknowledgement is not
 * written twice. {@code send} may wait for metadata or buffer space, so it runs on a thread of its
 * own, never on the caller's event loop.
 */
@ApplicationScoped
class DeadLetterProducer {

    private final Map<String, Object> kafka;
    private final ExecutorService sender = Executors.newSingleThreadExecutor(task -> {
        Thread thread = new Thread(task, "idem-dead-letter-sender");
        thread.setDaemon(true);
        return thread;
    });
    /** Touched only on the sender's thread, but for the close at shutdown. */
    private volatile Producer<byte[], byte[]> producer;

    DeadLetterProducer(@Identifier("default-kafka-broker") Map<String, Object> kafka) {
        this.kafka = kafka;
    }

    /** Completes once the broker acknowledged the record, fails when it did not. */
    Uni<Void> send(ProducerRecord<byte[], byte[]> record) {
        return Uni.createFrom().emitter(emitter -> sender.execute(() -> {
            try {
                producer().send(record, (written, failure) -> {
                    if (failure == null) {
                        emitter.complete(null);
                    } else {
                        emitter.fail(failure);
                    }
                });
            } catch (RuntimeException failure) {
                emitter.fail(failure);
            }
        }));
    }

    private Producer<byte[], byte[]> producer() {
        if (producer == null) {
            Map<String, Object> config = new HashMap<>(kafka);
            config.put(ProducerConfig.CLIENT_ID_CONFIG, "idem-dead-letters");
            config.put(ProducerConfig.ACKS_CONFIG, "all");
            config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
        }
        return producer;
    }

    @PreDestroy
    void close() {
        sender.shutdown();
        Producer<byte[], byte[]> made = producer;
        if (made != null) {
            made.close(Duration.ofSeconds(10));
        }
    }
}
