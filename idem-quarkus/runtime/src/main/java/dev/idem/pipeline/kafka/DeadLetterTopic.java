package dev.idem.pipeline.kafka;

import dev.idem.pipeline.OutageLog;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.IncomingKafkaRecord;
import io.smallrye.reactive.messaging.kafka.KafkaConnectorIncomingConfiguration;
import io.smallrye.reactive.messaging.kafka.KafkaConsumer;
import io.smallrye.reactive.messaging.kafka.fault.KafkaFailureHandler;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.HexFormat;
import java.util.function.BiConsumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

/**
 * The failure strategy {@value #STRATEGY}: a nacked record goes to the channel's dead-letter topic
 * ({@code dead-letter-queue.topic}, by default the channel's topic and {@code -dlq}) as it came (key, value and headers) with the headers of
 * SmallRye's own {@code dead-letter-queue} strategy ({@code dead-letter-reason}, {@code dead-letter-topic},
 * {@code dead-letter-partition}, {@code dead-letter-offset}, ...), and is acked once the broker has it.
 *
 * <p>Unlike {@code dead-letter-queue}, which builds a producer channel per consumer at start-up (its
 * configuration alone took most of a native executable's start), every channel shares one producer,
 * made on the first dead letter. A dead letter the broker does not take is sent again with backoff,
 * for as long as it takes: a poison record is never dropped, and its offset is not committed before.
 * Values must be {@code byte[]} (as {@link IdempotentConsumer} reads them), keys {@code byte[]} or
 * {@code String}.
 */
@ApplicationScoped
@Identifier(DeadLetterTopic.STRATEGY)
public class DeadLetterTopic implements KafkaFailureHandler.Factory {

    /** The channel's {@code failure-strategy}. */
    public static final String STRATEGY = "idem-dead-letter";

    private static final Logger LOG = Logger.getLogger(DeadLetterTopic.class);

    private final DeadLetterProducer producer;
    private final OutageLog outage;

    DeadLetterTopic(DeadLetterProducer producer, Clock clock) {
        this.producer = producer;
        this.outage = new OutageLog(LOG, clock, "The dead-letter producer", "each poison record waits for it, "
                + "sent again with backoff, its offset not committed", "dead letters not taken by the broker");
    }

    @Override
    public KafkaFailureHandler create(KafkaConnectorIncomingConfiguration config, Vertx vertx,
                                      KafkaConsumer<?, ?> consumer, BiConsumer<Throwable, Boolean> reportFailure) {
        return handlerFor(config.getChannel(),
                config.getDeadLetterQueueTopic().orElse(config.getTopic().orElse(config.getChannel()) + "-dlq"));
    }

    KafkaFailureHandler handlerFor(String channel, String topic) {
        return new Handler(channel, topic);
    }

    private final class Handler implements KafkaFailureHandler {

        private final String channel;
        private final String topic;

        Handler(String channel, String topic) {
            this.channel = channel;
            this.topic = topic;
        }

        @Override
        public <K, V> Uni<Void> handle(IncomingKafkaRecord<K, V> record, Throwable reason, Metadata metadata) {
            return send(deadLetter(topic, record, reason), record, 1)
                    .invoke(() -> LOG.warnf("%s: record %s-%d@%d (key %s) sent to %s: %s", channel, record.getTopic(),
                            record.getPartition(), record.getOffset(), printable(record.getKey()), topic, message(reason)))
                    .chain(() -> Uni.createFrom().completionStage(record::ack))
                    .emitOn(record::runOnMessageContext);
        }

        /** The dead letter, sent again with backoff until the broker takes it. */
        private Uni<Void> send(ProducerRecord<byte[], byte[]> dead, IncomingKafkaRecord<?, ?> record, int retry) {
            return Uni.createFrom().deferred(() -> producer.send(dead)).replaceWithVoid()
                    .invoke(outage::ok)
                    .onFailure().recoverWithUni(failure -> {
                        outage.failed(failure);
                        LOG.debugf("%s: the dead letter of %s-%d@%d will be sent again: %s",
                                channel, record.getTopic(), record.getPartition(), record.getOffset(), failure);
                        return Backoff.retry(retry, () -> send(dead, record, retry + 1));
                    });
        }
    }

    /** The record as it came, with why and where from in the headers Kafka's own strategy writes. */
    static ProducerRecord<byte[], byte[]> deadLetter(String topic, IncomingKafkaRecord<?, ?> record, Throwable reason) {
        ProducerRecord<byte[], byte[]> dead = new ProducerRecord<>(topic, bytes(record.getKey()), bytes(record.getPayload()));
        header(dead, "dead-letter-exception-class-name", reason.getClass().getName());
        header(dead, "dead-letter-reason", message(reason));
        if (reason.getCause() != null) {
            header(dead, "dead-letter-cause-class-name", reason.getCause().getClass().getName());
            header(dead, "dead-letter-cause", message(reason.getCause()));
        }
        header(dead, "dead-letter-topic", record.getTopic());
        header(dead, "dead-letter-partition", Integer.toString(record.getPartition()));
        header(dead, "dead-letter-offset", Long.toString(record.getOffset()));
        record.getHeaders().forEach(dead.headers()::add);
        return dead;
    }

    /** A record's key for the log: its text, or its bytes in hex when they are not UTF-8 text; at most 100 characters. */
    static String printable(Object key) {
        if (key == null) {
            return "null";
        }
        String text;
        if (key instanceof byte[] raw) {
            try {
                text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(raw)).toString();
            } catch (CharacterCodingException binary) {
                text = "0x" + HexFormat.of().formatHex(raw);
            }
        } else {
            text = key.toString();
        }
        return text.length() > 100 ? text.substring(0, 100) + "…" : text;
    }

    private static byte[] bytes(Object keyOrValue) {
        if (keyOrValue == null || keyOrValue instanceof byte[]) {
            return (byte[]) keyOrValue;
        }
        if (keyOrValue instanceof String text) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        throw new IllegalArgumentException("a dead letter holds byte[] or String, not " + keyOrValue.getClass().getName());
    }

    private static void header(ProducerRecord<?, ?> record, String name, String value) {
        record.headers().add(name, value.getBytes(StandardCharsets.UTF_8));
    }

    private static String message(Throwable failure) {
        return failure.getMessage() != null ? failure.getMessage() : failure.toString();
    }
}
