package dev.idem.ops;

import io.vertx.core.json.JsonObject;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.Comparator;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * One record of a dead-letter topic as it lies there: raw key and value, and the headers written
 * by SmallRye's dead-letter strategy (its own first, then those of the record it dead-lettered).
 */
public record DeadLetter(Position position, long timestamp, byte[] key, byte[] value, Headers headers) {

    static final String REASON = "dead-letter-reason";
    static final String CAUSE = "dead-letter-cause";
    static final String SOURCE_TOPIC = "dead-letter-topic";
    static final String SOURCE_PARTITION = "dead-letter-partition";
    static final String SOURCE_OFFSET = "dead-letter-offset";
    private static final String DEAD_LETTERING = "dead-letter-";

    /**
     * On a re-driven record, the dead letter it came from ({@code <partition>:<offset>}). A record
     * that is dead-lettered again keeps it, which tells a returned dead letter from a first one.
     */
    static final String REDRIVEN_FROM = "idem-redriven-from";

    /** Newest first: by timestamp, then by offset within a partition. */
    static final Comparator<DeadLetter> NEWEST_FIRST = Comparator.comparingLong(DeadLetter::timestamp)
            .thenComparingLong(letter -> letter.position().offset())
            .thenComparingInt(letter -> letter.position().partition())
            .reversed();

    /** Where a dead letter lies in its topic. An offset alone is ambiguous: the topic has several partitions. */
    public record Position(int partition, long offset) {

        /** {@code <partition>:<offset>}, as written by {@link #toString()}. */
        static Optional<Position> parse(String text) {
            int colon = text.indexOf(':');
            if (colon < 0) {
                return Optional.empty();
            }
            Optional<Long> partition = number(text.substring(0, colon));
            Optional<Long> offset = number(text.substring(colon + 1));
            return partition.isPresent() && offset.isPresent() && partition.get() <= Integer.MAX_VALUE
                    ? Optional.of(new Position(partition.get().intValue(), offset.get()))
                    : Optional.empty();
        }

        @Override
        public String toString() {
            return partition + ":" + offset;
        }
    }

    static DeadLetter of(ConsumerRecord<byte[], byte[]> record) {
        return new DeadLetter(new Position(record.partition(), record.offset()), record.timestamp(),
                record.key(), record.value(), record.headers());
    }

    /** The first header of that name: the dead-letter strategy writes its own before the record's. */
    Optional<String> header(String name) {
        for (Header header : headers.headers(name)) {
            return Optional.ofNullable(header.value()).map(bytes -> new String(bytes, StandardCharsets.UTF_8));
        }
        return Optional.empty();
    }

    /** Dead-lettered again after a re-drive: only re-driven when an operator names it. */
    boolean returned() {
        return header(REDRIVEN_FROM).isPresent();
    }

    /**
     * The record to send back to {@code topic}: the key and value as received and the record's
     * own headers. The dead-lettering's headers stay behind, or the next dead-lettering would add
     * its own beside them; the dead letter's position goes along instead.
     */
    ProducerRecord<byte[], byte[]> redriveTo(String topic) {
        Headers forwarded = new RecordHeaders();
        for (Header header : headers) {
            if (!header.key().startsWith(DEAD_LETTERING) && !header.key().equals(REDRIVEN_FROM)) {
                forwarded.add(header);
            }
        }
        forwarded.add(REDRIVEN_FROM, position.toString().getBytes(StandardCharsets.UTF_8));
        return new ProducerRecord<>(topic, null, key, value, forwarded);
    }

    JsonObject toJson(Optional<Instant> redrivenAt) {
        JsonObject json = new JsonObject()
                .put("partition", position.partition())
                .put("offset", position.offset())
                .put("timestamp", Instant.ofEpochMilli(timestamp).toString())
                .put("reason", header(REASON).orElse(null));
        header(CAUSE).ifPresent(cause -> json.put("cause", cause));
        putBytes(json, "key", key);
        putBytes(json, "value", value);
        Optional<String> sourceTopic = header(SOURCE_TOPIC);
        Optional<Long> sourcePartition = header(SOURCE_PARTITION).flatMap(DeadLetter::number);
        Optional<Long> sourceOffset = header(SOURCE_OFFSET).flatMap(DeadLetter::number);
        if (sourceTopic.isPresent() && sourcePartition.isPresent() && sourceOffset.isPresent()) {
            json.put("source", new JsonObject()
                    .put("topic", sourceTopic.get())
                    .put("partition", sourcePartition.get())
                    .put("offset", sourceOffset.get()));
        }
        header(REDRIVEN_FROM).ifPresent(from -> json.put("redrivenFrom", from));
        json.put("redrivenAt", redrivenAt.map(Instant::toString).orElse(null));
        return json;
    }

    /** Text when the bytes are UTF-8; otherwise base64, and the encoding member says which. */
    private static void putBytes(JsonObject json, String name, byte[] bytes) {
        if (bytes == null) {
            json.putNull(name);
            return;
        }
        try {
            String text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
            json.put(name, text).put(name + "Encoding", "utf-8");
        } catch (CharacterCodingException notText) {
            json.put(name, Base64.getEncoder().encodeToString(bytes)).put(name + "Encoding", "base64");
        }
    }

    private static Optional<Long> number(String text) {
        if (text.isEmpty() || text.length() > 18 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return Optional.empty();
        }
        return Optional.of(Long.parseLong(text));
    }
}
