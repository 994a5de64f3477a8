package dev.idem.ops;

import static dev.idem.pipeline.SqlTime.ts;

import dev.idem.ops.DeadLetter.Position;
import dev.idem.pipeline.SqlTime;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** All SQL on {@code dead_letter_redrive}: which dead letters were sent back to their source topic. */
@ApplicationScoped
class DeadLetterRedrives {

    /**
     * Serializes the re-drives of one dead-letter topic, across instances, for the length of a
     * transaction: two re-drives claiming overlapping batches would otherwise wait on each
     * other's rows and deadlock.
     */
    private static final String LOCK = "SELECT pg_advisory_xact_lock(hashtext('dead_letter_redrive:' || $1))";

    /** The rows new to the table are the dead letters this transaction re-drives; the rest were before. */
    private static final String CLAIM = """
            INSERT INTO dead_letter_redrive (dead_letter_topic, dead_letter_partition, dead_letter_offset,
                                             dead_letter_timestamp, channel, topic, redriven_at)
            SELECT $1, d.p, d.o, d.t, $2, $3, $4 FROM unnest($5::int[], $6::bigint[], $7::bigint[]) AS d(p, o, t)
            ON CONFLICT ON CONSTRAINT dead_letter_redrive_once_per_dead_letter DO NOTHING
            RETURNING dead_letter_partition, dead_letter_offset""";

    private static final String REDRIVEN = """
            SELECT r.dead_letter_partition, r.dead_letter_offset, r.redriven_at
            FROM dead_letter_redrive r
            JOIN unnest($2::int[], $3::bigint[], $4::bigint[]) AS d(p, o, t)
              ON r.dead_letter_partition = d.p AND r.dead_letter_offset = d.o AND r.dead_letter_timestamp = d.t
            WHERE r.dead_letter_topic = $1""";

    private final Pool pool;

    DeadLetterRedrives(Pool pool) {
        this.pool = pool;
    }

    Uni<Void> lock(SqlConnection tx, String deadLetterTopic) {
        return tx.preparedQuery(LOCK).execute(Tuple.of(deadLetterTopic)).replaceWithVoid();
    }

    /**
     * Records {@code letters} as re-driven in the caller's transaction, and answers the positions
     * of those not recorded before: the ones to send now.
     */
    Uni<Set<Position>> claim(SqlConnection tx, String channel, OpsConfig.DeadLetters.Channel topics,
                             List<DeadLetter> letters, Instant now) {
        Tuple params = Tuple.of(topics.deadLetterTopic(), channel, topics.topic(), ts(now))
                .addArrayOfInteger(letters.stream().map(l -> l.position().partition()).toArray(Integer[]::new))
                .addArrayOfLong(letters.stream().map(l -> l.position().offset()).toArray(Long[]::new))
                .addArrayOfLong(letters.stream().map(DeadLetter::timestamp).toArray(Long[]::new));
        return tx.preparedQuery(CLAIM).execute(params).map(rows -> {
            Set<Position> claimed = new HashSet<>();
            for (Row row : rows) {
                claimed.add(position(row));
            }
            return claimed;
        });
    }

    /** When each of {@code letters} was re-driven, for those that were. */
    Uni<Map<Position, Instant>> redrivenAt(String deadLetterTopic, List<DeadLetter> letters) {
        if (letters.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        Tuple params = Tuple.of(deadLetterTopic)
                .addArrayOfInteger(letters.stream().map(l -> l.position().partition()).toArray(Integer[]::new))
                .addArrayOfLong(letters.stream().map(l -> l.position().offset()).toArray(Long[]::new))
                .addArrayOfLong(letters.stream().map(DeadLetter::timestamp).toArray(Long[]::new));
        return pool.preparedQuery(REDRIVEN).execute(params).map(rows -> {
            Map<Position, Instant> at = new HashMap<>();
            for (Row row : rows) {
                at.put(position(row), SqlTime.instant(row, "redriven_at"));
            }
            return at;
        });
    }

    private static Position position(Row row) {
        return new Position(row.getInteger("dead_letter_partition"), row.getLong("dead_letter_offset"));
    }
}
