package dev.idem.ops;

import dev.idem.ops.DeadLetter.Position;
import dev.idem.ops.DeadLetterReader.Scan;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.reactive.messaging.MutinyEmitter;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

/**
 * The channels' dead letters for operators: listed, and re-driven to the channel's own topic, so
 * that they go through the pipeline again (which stops those already applied). Each dead letter is
 * sent back at most once ({@link DeadLetterRedrives}); one still poison comes back to the
 * dead-letter topic as a new dead letter, with its reason. Kafka is read on worker threads
 * ({@link DeadLetterReader} blocks); sending and the database stay reactive.
 */
@ApplicationScoped
public class DeadLetters {

    /** Re-sent records awaiting the broker's ack at once, per re-drive batch. */
    private static final int IN_FLIGHT = 64;

    /** A channel whose dead letters can be listed and re-driven. */
    public record Source(String channel, String topic, String deadLetterTopic) {}

    /** Which dead letters a re-drive sends. */
    public sealed interface Selection {

        /**
         * Every dead letter not re-driven before. Those that came back from a re-drive are left,
         * so that re-driving all twice has no second effect, poison included.
         */
        record All() implements Selection {}

        /** The dead letter at that position, unless it was re-driven before; a returned one too. */
        record One(Position position) implements Selection {}
    }

    /** What a re-drive did. */
    public sealed interface Redrive {

        record Done(Tally tally) implements Redrive {}

        /** The dead-letter topic holds no record at that position (any more). */
        record NotFound(Position position) implements Redrive {}
    }

    /**
     * Dead letters read, sent back now, skipped because they were sent back before, and left
     * because they came back from an earlier re-drive.
     */
    public record Tally(int examined, int redriven, int skipped, int returned) {

        static final Tally NONE = new Tally(0, 0, 0, 0);

        Tally plus(Tally other) {
            return new Tally(examined + other.examined, redriven + other.redriven, skipped + other.skipped,
                    returned + other.returned);
        }
    }

    private final OpsConfig.DeadLetters config;
    private final DeadLetterReader reader;
    private final DeadLetterRedrives redrives;
    private final Pool pool;
    private final Clock clock;
    private final MeterRegistry registry;
    private final MutinyEmitter<ProducerRecord<byte[], byte[]>> producer;

    DeadLetters(OpsConfig config, DeadLetterReader reader, DeadLetterRedrives redrives, Pool pool,
                Clock clock, MeterRegistry registry,
                @Channel("dead-letter-redrive") @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 256)
                MutinyEmitter<ProducerRecord<byte[], byte[]>> producer) {
        this.config = config.deadLetters();
        this.reader = reader;
        this.redrives = redrives;
        this.pool = pool;
        this.clock = clock;
        this.registry = registry;
        this.producer = producer;
    }

    public Optional<Source> source(String channel) {
        return Optional.ofNullable(config.channels().get(channel))
                .map(topics -> new Source(channel, topics.topic(), topics.deadLetterTopic()));
    }

    /** The listing's size: the default when none is asked for; empty when the request is not 1..max. */
    public Optional<Integer> limit(String requested) {
        if (requested == null) {
            return Optional.of(config.defaultLimit());
        }
        return digits(requested)
                .filter(limit -> limit >= 1 && limit <= config.maxLimit())
                .map(Long::intValue);
    }

    public int maxLimit() {
        return config.maxLimit();
    }

    /**
     * Which dead letters a re-drive names: none of the two parameters is all; one is
     * {@code offset=<partition>:<offset>} or {@code partition=<partition>&offset=<offset>}. Empty
     * when the request names none unambiguously (an offset alone, say).
     */
    public static Optional<Selection> selection(String partition, String offset) {
        if (partition == null && offset == null) {
            return Optional.of(new Selection.All());
        }
        if (offset == null) {
            return Optional.empty();
        }
        Optional<Position> position = partition == null ? Position.parse(offset)
                : Position.parse(partition + ":" + offset);
        return position.map(Selection.One::new);
    }

    /** The newest {@code limit} dead letters, newest first, each with when it was re-driven, if it was. */
    public Uni<JsonObject> list(Source source, int limit) {
        return blocking(() -> reader.newest(source.deadLetterTopic(), limit))
                .chain(page -> redrives.redrivenAt(source.deadLetterTopic(), page.newest()).map(redriven -> {
                    JsonArray records = new JsonArray();
                    page.newest().forEach(letter ->
                            records.add(letter.toJson(Optional.ofNullable(redriven.get(letter.position())))));
                    return new JsonObject()
                            .put("channel", source.channel())
                            .put("topic", source.deadLetterTopic())
                            .put("total", page.total())
                            .put("limit", limit)
                            .put("records", records);
                }));
    }

    public Uni<Redrive> redrive(Source source, Selection selection) {
        if (selection instanceof Selection.One one) {
            return blocking(() -> reader.find(source.deadLetterTopic(), one.position()))
                    .chain(found -> found.isEmpty()
                            ? Uni.createFrom().item(new Redrive.NotFound(one.position()))
                            : redriveBatch(source, found.stream().toList(), true).map(Redrive.Done::new));
        }
        return blocking(() -> reader.scan(source.deadLetterTopic()))
                .chain(scan -> redriveRest(source, scan, Tally.NONE)
                        .onTermination().call(() -> blocking(() -> {
                            scan.close();
                            return null;
                        })))
                .map(Redrive.Done::new);
    }

    public static JsonObject toJson(Source source, Tally tally) {
        return new JsonObject()
                .put("channel", source.channel())
                .put("topic", source.topic())
                .put("deadLetterTopic", source.deadLetterTopic())
                .put("examined", tally.examined())
                .put("redriven", tally.redriven())
                .put("skipped", tally.skipped())
                .put("returned", tally.returned());
    }

    /** A batch at a time to the end of the scan: at most one batch of records is held at once. */
    private Uni<Tally> redriveRest(Source source, Scan scan, Tally sofar) {
        return blocking(scan::next).chain(batch -> batch.isEmpty()
                ? Uni.createFrom().item(sofar)
                : redriveBatch(source, batch, false).chain(tally -> redriveRest(source, scan, sofar.plus(tally))));
    }

    /**
     * One transaction: record the batch as re-driven, send those not recorded before, wait for
     * every ack, commit. A failed send rolls the records back, so they stay to be re-driven; a
     * crash after the acks and before the commit sends them again next time, as a duplicate
     * delivery that the pipeline stops.
     */
    private Uni<Tally> redriveBatch(Source source, List<DeadLetter> letters, boolean returnedToo) {
        List<DeadLetter> candidates = returnedToo ? letters
                : letters.stream().filter(letter -> !letter.returned()).toList();
        int returned = letters.size() - candidates.size();
        if (candidates.isEmpty()) {
            return Uni.createFrom().item(counted(source, new Tally(letters.size(), 0, 0, returned)));
        }
        OpsConfig.DeadLetters.Channel topics = config.channels().get(source.channel());
        return pool.withTransaction(tx -> redrives.lock(tx, source.deadLetterTopic())
                        .chain(() -> redrives.claim(tx, source.channel(), topics, candidates, clock.instant()))
                        .chain(claimed -> {
                            List<DeadLetter> now = candidates.stream()
                                    .filter(letter -> claimed.contains(letter.position())).toList();
                            return send(source, now).replaceWith(new Tally(letters.size(), now.size(),
                                    candidates.size() - now.size(), returned));
                        }))
                .map(tally -> counted(source, tally));
    }

    private Uni<Void> send(Source source, List<DeadLetter> letters) {
        if (letters.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return Multi.createFrom().iterable(letters)
                .onItem().transformToUni(letter -> producer.sendMessage(Message.of(letter.redriveTo(source.topic())))
                        .replaceWith(letter))
                .merge(IN_FLIGHT)
                .collect().last()
                .replaceWithVoid();
    }

    private Tally counted(Source source, Tally tally) {
        count("idem.dead.letters.redriven", "Dead letters sent back to their source topic", source, Map.of(),
                tally.redriven());
        count("idem.dead.letters.redrive.skipped", "Dead letters a re-drive left", source,
                Map.of("why", "already-redriven"), tally.skipped());
        count("idem.dead.letters.redrive.skipped", "Dead letters a re-drive left", source,
                Map.of("why", "returned"), tally.returned());
        if (tally.redriven() > 0) {
            Log.infof("%s: %d dead letters re-driven from %s to %s", source.channel(), tally.redriven(),
                    source.deadLetterTopic(), source.topic());
        }
        return tally;
    }

    private void count(String name, String description, Source source, Map<String, String> tags, int amount) {
        Counter.Builder builder = Counter.builder(name).description(description).tag("channel", source.channel());
        tags.forEach(builder::tag);
        builder.register(registry).increment(amount);
    }

    private static Optional<Long> digits(String text) {
        if (text.isEmpty() || text.length() > 9 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return Optional.empty();
        }
        return Optional.of(Long.parseLong(text));
    }

    /** Blocking Kafka client calls leave the event loop for a worker thread. */
    private static <T> Uni<T> blocking(Supplier<T> work) {
        return Uni.createFrom().item(work).runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
    }
}
