package dev.idem.pipeline.kafka;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.pipeline.DeliveryTraces;
import dev.idem.pipeline.IdemRequest;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Outcome;
import dev.idem.pipeline.PipelineConfig;
import dev.idem.pipeline.StrictJson.Parsed;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.util.concurrent.EventExecutor;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.KafkaRecord;
import io.smallrye.reactive.messaging.kafka.KafkaRecordBatch;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import io.smallrye.common.vertx.VertxContext;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.impl.VertxInternal;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.jboss.logging.Logger;

/**
 * The Kafka side of the pipeline, for a service's {@code @Incoming} handlers. A record is read
 * tolerantly ({@link RecordReader}: unknown members ignored, every other rule kept) and applied; it is acked only after its effect committed (the
 * throttled commit strategy then commits its offset), a poison record is nacked into the channel's
 * dead-letter topic with its reason, and a transient failure is retried with backoff for as long
 * as it takes: never skipped, never dead-lettered. What each outcome becomes is the
 * {@link DispositionPolicy}'s to say.
 *
 * <p>The channel needs {@code failure-strategy=idem-dead-letter} ({@link DeadLetterTopic}, with its
 * {@code dead-letter-queue.topic}) and {@code commit-strategy=throttled};
 * since a record may be retried for as long as the database is away, set
 * {@code throttled.unprocessed-record-max-age.ms=0} too, or the channel is reported dead after a minute.
 */
@ApplicationScoped
public class IdempotentConsumer {

    private static final Logger LOG = Logger.getLogger(IdempotentConsumer.class);

    /**
     * Records a channel holds in flight, one by one: enough for every partition to have work while
     * one waits out a backoff. Parts of polls (a part is a poll's records of one partition): two
     * polls of four partitions, so a consumer polls again while its last poll is applied.
     */
    private static final int RECORDS_IN_FLIGHT = 64;
    private static final int PARTS_IN_FLIGHT = 8;

    private final RecordReader reader;
    private final ObjectMapper mapper;
    private final DispositionPolicy policy;
    private final IdempotencyPipeline pipeline;
    private final int workAttempts;
    private final MeterRegistry registry;
    private final Map<String, PartitionLanes> lanes = new ConcurrentHashMap<>();
    private final List<Executor> loops = new ArrayList<>();

    IdempotentConsumer(RecordReader reader, ObjectMapper mapper, DispositionPolicy policy, IdempotencyPipeline pipeline,
                       PipelineConfig config, MeterRegistry registry, Vertx vertx) {
        this.reader = reader;
        this.mapper = mapper;
        this.policy = policy;
        this.pipeline = pipeline;
        this.workAttempts = Math.max(1, config.workAttempts());
        this.registry = registry;
        // a context on each event loop in turn, for the partitions' lanes; each task on a duplicate
        // of it, as Quarkus runs every message: what a task keeps in its context (its trace) is its own
        VertxInternal internal = (VertxInternal) vertx;
        for (EventExecutor ignored : internal.getEventLoopGroup()) {
            Context loop = internal.createEventLoopContext();
            loops.add(task -> VertxContext.createNewDuplicatedContext(loop).runOnContext(nothing -> task.run()));
        }
    }

    /**
     * The short form, for an {@code @Incoming} method that takes {@code Message<byte[]>}: reads the
     * record's value as {@code type} ({@link RecordReader}), runs {@code work} for it in the
     * pipeline's transaction under the key {@code key} gives within {@code scope}, and settles the
     * record (acked once its effect committed; dead-lettered when it cannot be read, has no key, or
     * its key was used with other content; retried while the database is away). Two records with
     * one key and the same content are one delivery; the second is acked as a duplicate.
     *
     * <pre>{@code
     * @Incoming("gift-card-issues")
     * public Uni<Void> issue(Message<byte[]> record) {
     *     return consumer.consume(record, "gift-card-issue", CardIssue.class, CardIssue::bizKey, cards::issue);
     * }
     * }</pre>
     *
     * @param record the record as the {@code @Incoming} method received it
     * @param scope the scope of the keys, one per kind of record (such as {@code "gift-card-issue"})
     * @param type the class the record's JSON value is read into (a record class, say)
     * @param key the record's business key (at most 255 characters), such as its {@code bizKey}
     * @param work the business change: {@code (value, tx) -> Uni<Effect>}
     */
    public <T> Uni<Void> consume(Message<byte[]> record, String scope, Class<T> type, Function<T, String> key,
                                 RecordWork<T> work) {
        String channel = record.getMetadata(IncomingKafkaRecordMetadata.class)
                .map(IncomingKafkaRecordMetadata::getChannel)
                .orElse(scope);
        return consume(channel, record, type, value -> keyless(key.apply(value)), value -> pipeline.execute(
                new IdemRequest(scope, key.apply(value), fingerprint(value)), tx -> work.run(value, tx)));
    }

    private static Optional<String> keyless(String key) {
        return key == null || key.isBlank() || key.length() > 255
                ? Optional.of("the record's key is missing, blank or longer than 255 characters")
                : Optional.empty();
    }

    /** A value's content, whatever the spacing and order of members it came with. */
    private String fingerprint(Object value) {
        try {
            return IdemRequest.fingerprint(mapper.writeValueAsString(value));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a record read as " + value.getClass().getName() + " cannot be written back", e);
        }
    }

    /**
     * Reads the record as {@code type}, applies it and settles it. A Kafka record is applied on its
     * partition's lane ({@link PartitionLanes}): the answer comes once the channel may take its next
     * record, not once this one is settled, so one consumer applies its partitions concurrently,
     * each in order.
     *
     * @param channel names the consumer in logs and in the counters
     *                {@code idem_messaging_retries_total} and {@code idem_messaging_dead_letters_total}
     * @param message the record as the {@code @Incoming} method received it
     * @param type the class the record's JSON value is read into ({@link RecordReader})
     * @param validate the first rule the value breaks, or empty: a value that breaks one is dead-lettered
     * @param apply the value through the pipeline, usually {@code value -> pipeline.execute(request, work)}
     */
    public <T> Uni<Void> consume(String channel, Message<byte[]> message, Class<T> type,
                                 Function<T, Optional<String>> validate, Function<T, Uni<Outcome>> apply) {
        Supplier<Uni<Void>> work = () -> settleOne(channel, message, type, validate, apply);
        Optional<IncomingKafkaRecordMetadata> kafka = message.getMetadata(IncomingKafkaRecordMetadata.class);
        if (kafka.isEmpty()) {
            return work.get();
        }
        PartitionLanes lanes = lanes(channel, RECORDS_IN_FLIGHT);
        lanes.submit(new TopicPartition(kafka.get().getTopic(), kafka.get().getPartition()), work);
        return lanes.admission();
    }

    private <T> Uni<Void> settleOne(String channel, Message<byte[]> message, Class<T> type,
                                    Function<T, Optional<String>> validate, Function<T, Uni<Outcome>> apply) {
        Parsed<T> parsed = reader.read(channel, message.getPayload(), type, validate);
        if (parsed instanceof Parsed.Invalid<T> invalid) {
            return poison(channel, message, invalid);
        }
        return settle(new Round<>(channel, List.of(message), List.of(((Parsed.Valid<T>) parsed).value()),
                values -> apply.apply(values.get(0)).map(List::of), true), 1, 0);
    }

    /**
     * A batch of records (one poll; {@code batch=true} on the channel), split by partition, each
     * part applied on its partition's lane ({@link PartitionLanes}): the answer comes once the
     * channel may take its next poll, so several polls are applied at once, each partition in
     * order. In a part, poison is dead-lettered record by record; the rest is applied at once by
     * {@code applyAll}, which answers one outcome per value, in order. A transient failure applies
     * the pending records again with backoff; records in flight elsewhere are applied again on
     * their own after a backoff. A part's last record is acked once every record of the part is
     * settled, which lets its offset be committed.
     */
    public <T> Uni<Void> consumeBatch(String channel, KafkaRecordBatch<String, byte[]> batch, Class<T> type,
                                      Function<T, Optional<String>> validate,
                                      Function<List<T>, Uni<List<Outcome>>> applyAll) {
        Map<TopicPartition, List<KafkaRecord<String, byte[]>>> parts = new LinkedHashMap<>();
        for (KafkaRecord<String, byte[]> record : batch.getRecords()) {
            parts.computeIfAbsent(new TopicPartition(record.getTopic(), record.getPartition()), p -> new ArrayList<>())
                    .add(record);
        }
        PartitionLanes lanes = lanes(channel, PARTS_IN_FLIGHT);
        parts.forEach((partition, records) -> {
            KafkaRecord<String, byte[]> last = batch.getLatestOffsetRecords().get(partition);
            lanes.submit(partition, () -> settlePart(channel, records, type, validate, applyAll)
                    .chain(() -> Uni.createFrom().completionStage(last::ack)));
        });
        return lanes.admission();
    }

    private <T> Uni<Void> settlePart(String channel, List<KafkaRecord<String, byte[]>> records, Class<T> type,
                                     Function<T, Optional<String>> validate,
                                     Function<List<T>, Uni<List<Outcome>>> applyAll) {
        List<Message<byte[]>> pending = new ArrayList<>();
        List<T> values = new ArrayList<>();
        List<Uni<Void>> poison = new ArrayList<>();
        for (KafkaRecord<String, byte[]> record : records) {
            Parsed<T> parsed = reader.read(channel, record.getPayload(), type, validate);
            if (parsed instanceof Parsed.Valid<T> valid) {
                pending.add(record);
                values.add(valid.value());
            } else {
                poison.add(poison(channel, record, (Parsed.Invalid<T>) parsed));
            }
        }
        return all(poison).chain(() -> settle(new Round<>(channel, pending, values, applyAll, false), 1, 0));
    }

    private PartitionLanes lanes(String channel, int limit) {
        return lanes.computeIfAbsent(channel, c -> new PartitionLanes(limit, loops));
    }

    /**
     * Records to apply together, how to apply them, and whether each is acked as it is settled (one
     * record) or the caller acks the part's last record once all are (a poll).
     */
    private record Round<T>(String channel, List<Message<byte[]>> records, List<T> values,
                            Function<List<T>, Uni<List<Outcome>>> applyAll, boolean ackEach) {

        Round<T> only(List<Integer> indices) {
            return new Round<>(channel, indices.stream().map(records::get).toList(),
                    indices.stream().map(values::get).toList(), applyAll, ackEach);
        }
    }

    /**
     * Applies the round's records until each is settled: acked, dead-lettered, or applied again
     * after the {@link Backoff} ({@code retry} counts the tries so far). A transient failure (the
     * database away) and a key in flight elsewhere are retried for as long as they last: never
     * skipped, never dead-lettered. Any other failure (the work threw, or the database refused one
     * of its statements) fails the same way every time: after {@code idem.pipeline.work-attempts}
     * ({@code failures} counts them) the record is dead-lettered as {@code WORK_FAILED} rather than
     * holding its partition for ever; in a poll, the records are then applied one by one, so that
     * only the failing one goes.
     */
    private <T> Uni<Void> settle(Round<T> round, int retry, int failures) {
        if (round.records().isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return Uni.createFrom().deferred(() -> DeliveryTraces.within(RecordTraces.of(round.records()),
                        () -> round.applyAll().apply(round.values())))
                .onItemOrFailure().transformToUni((outcomes, failure) -> {
                    if (failure == null) {
                        return dispose(round, outcomes, retry, failures);
                    }
                    boolean transientFailure = pipeline.isTransient(failure);
                    if (transientFailure || failures + 1 < workAttempts) {
                        return again(round, retry, transientFailure ? failures : failures + 1, failure.toString(),
                                transientFailure);
                    }
                    if (round.records().size() == 1) {
                        return deadLetter(round.channel(), round.records().get(0), "WORK_FAILED: " + failure);
                    }
                    return Multi.createFrom().range(0, round.records().size())
                            .onItem().transformToUniAndConcatenate(i -> settle(round.only(List.of(i)), 1, 0))
                            .collect().last().replaceWithVoid();
                });
    }

    /** What the policy makes of each outcome: acks, dead letters, and the records to apply again later. */
    private <T> Uni<Void> dispose(Round<T> round, List<Outcome> outcomes, int retry, int failures) {
        List<Uni<Void>> settled = new ArrayList<>();
        List<Integer> later = new ArrayList<>();
        for (int i = 0; i < outcomes.size(); i++) {
            Message<byte[]> record = round.records().get(i);
            Disposition disposition = policy.of(outcomes.get(i));
            if (disposition instanceof Disposition.DeadLetter dead) {
                settled.add(deadLetter(round.channel(), record, dead.reason()));
            } else if (disposition instanceof Disposition.RetryLater) {
                later.add(i);
            } else if (round.ackEach()) {
                settled.add(Uni.createFrom().completionStage(record::ack));
            }
        }
        return all(settled).chain(() -> later.isEmpty()
                ? Uni.createFrom().voidItem()
                : again(round.only(later), retry, failures, "the key is still in flight", false));
    }

    private <T> Uni<Void> again(Round<T> round, int retry, int failures, String why, boolean databaseAway) {
        retries(round.channel(), round.records().size());
        // while the database is away the pipeline says so, once a minute; a retry is detail then
        LOG.logf(databaseAway ? Logger.Level.DEBUG : Logger.Level.WARN, "%s: %d record(s) will be retried: %s",
                round.channel(), round.records().size(), why);
        return Backoff.retry(retry, () -> settle(round, retry + 1, failures));
    }

    /** A record that cannot be read as its type: dead-lettered with why, in one wording for both forms. */
    private Uni<Void> poison(String channel, Message<byte[]> message, Parsed.Invalid<?> invalid) {
        return deadLetter(channel, message, "POISON: " + invalid.detail());
    }

    /** Nacked with its reason: the channel's failure strategy ({@link DeadLetterTopic}) sends it on and logs where. */
    private Uni<Void> deadLetter(String channel, Message<byte[]> message, String reason) {
        count("idem.messaging.dead.letters", "Records sent to the dead-letter topic", channel, 1);
        return Uni.createFrom().completionStage(() -> message.nack(new DeadLetter(reason)));
    }

    private static Uni<Void> all(List<Uni<Void>> unis) {
        return unis.isEmpty() ? Uni.createFrom().voidItem() : Uni.join().all(unis).andFailFast().replaceWithVoid();
    }

    /** One counter, one description, for every path that applies records again. */
    private void retries(String channel, int records) {
        count("idem.messaging.retries", "Records applied again: in flight elsewhere, or after a failure", channel, records);
    }

    private void count(String name, String description, String channel, int amount) {
        Counter.builder(name).description(description).tag("channel", channel).register(registry).increment(amount);
    }

    /** The failure a nacked record carries; its message becomes the dead-letter reason header. */
    static final class DeadLetter extends RuntimeException {
        DeadLetter(String reason) {
            super(reason, null, false, false);
        }
    }
}
