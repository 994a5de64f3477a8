package dev.idem.outbox;

import static dev.idem.pipeline.SqlTime.ts;

import dev.idem.pipeline.SqlTime;

import dev.idem.pipeline.Work;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Transaction;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** All SQL on {@code outbox_event}. */
@ApplicationScoped
public class OutboxRepository {

    /** One event per (topic, key): appending it again is a no-op, not an error. */
    private static final String APPEND = """
            INSERT INTO outbox_event (topic, event_key, payload, created_at, traceparent)
            VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT ON CONSTRAINT outbox_event_one_per_key DO NOTHING""";

    /** Oldest first; rows another relay is publishing are skipped, not waited for. */
    private static final String CLAIM = """
            SELECT id, topic, event_key, payload::text AS payload, traceparent FROM outbox_event
            WHERE published_at IS NULL ORDER BY id LIMIT $1
            FOR UPDATE SKIP LOCKED""";

    private static final String MARK_PUBLISHED = "UPDATE outbox_event SET published_at = $2 WHERE id = ANY($1)";

    /** Published events past retention move to the archive, a bounded batch at a time. */
    private static final String ARCHIVE = """
            WITH batch AS (
                SELECT id FROM outbox_event WHERE published_at < $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED),
            moved AS (
                DELETE FROM outbox_event o USING batch WHERE o.id = batch.id
                RETURNING o.id, o.topic, o.event_key, o.payload, o.created_at, o.published_at)
            INSERT INTO outbox_event_archive (id, topic, event_key, payload, created_at, published_at, archived_at)
            SELECT id, topic, event_key, payload, created_at, published_at, $3 FROM moved
            ON CONFLICT ON CONSTRAINT outbox_event_archive_pk DO NOTHING""";

    private static final String OLDEST_UNPUBLISHED = "SELECT min(created_at) AS oldest FROM outbox_event WHERE published_at IS NULL";

    /** Re-publishes an event, writing it anew if it is gone: repair for a grant that never arrived. */
    private static final String REPUBLISH = """
            INSERT INTO outbox_event (topic, event_key, payload, created_at)
            VALUES ($1, $2, $3, $4)
            ON CONFLICT ON CONSTRAINT outbox_event_one_per_key DO UPDATE SET published_at = NULL""";

    private final Clock clock;
    private final OutboxSignal signal;

    OutboxRepository(Clock clock, OutboxSignal signal) {
        this.clock = clock;
        this.signal = signal;
    }

    /**
     * Appends an event in the caller's transaction, so it exists exactly when the change does;
     * the relay hears of it once that transaction committed. On the pipeline's connection it keeps
     * the delivery's trace, which the relay sends it in.
     */
    public Uni<Void> append(SqlConnection tx, String topic, String key, JsonObject payload) {
        return tx.preparedQuery(APPEND)
                .execute(Tuple.of(topic, key, payload, ts(clock.instant()), Work.traceparent(tx).orElse(null)))
                .invoke(() -> signalAtCommit(tx))
                .replaceWithVoid();
    }

    private void signalAtCommit(SqlConnection tx) {
        Transaction transaction = tx.transaction();
        if (transaction == null) {
            signal.committed();
            return;
        }
        // a rolled-back transaction fails its completion: nothing to publish, nothing to say
        transaction.completion().subscribe().with(committed -> signal.committed(), rolledBack -> {});
    }

    /** Locks up to {@code limit} unpublished events for the caller's transaction. */
    Uni<List<OutboxEvent>> claim(SqlConnection tx, int limit) {
        return tx.preparedQuery(CLAIM).execute(Tuple.of(limit)).map(rows -> {
            List<OutboxEvent> events = new ArrayList<>(rows.size());
            for (Row row : rows) {
                events.add(new OutboxEvent(row.getLong("id"), row.getString("topic"), row.getString("event_key"),
                        row.getString("payload"), row.getString("traceparent")));
            }
            return events;
        });
    }

    public Uni<Void> republish(SqlClient client, String topic, String key, JsonObject payload) {
        return client.preparedQuery(REPUBLISH).execute(Tuple.of(topic, key, payload, ts(clock.instant())))
                .invoke(signal::committed)
                .replaceWithVoid();
    }

    /** When the oldest event still waiting for the relay was written; empty when none waits. */
    public Uni<Optional<Instant>> oldestUnpublished(SqlClient client) {
        return client.query(OLDEST_UNPUBLISHED).execute()
                .map(rows -> Optional.ofNullable(SqlTime.instant(rows.iterator().next(), "oldest")));
    }

    /** Moves up to {@code limit} events published before {@code before}; answers how many moved. */
    public Uni<Integer> archivePublished(SqlClient client, Instant before, int limit) {
        return client.preparedQuery(ARCHIVE).execute(Tuple.of(ts(before), limit, ts(clock.instant())))
                .map(rows -> rows.rowCount());
    }

    Uni<Void> markPublished(SqlClient client, List<OutboxEvent> events) {
        Long[] ids = events.stream().map(OutboxEvent::id).toArray(Long[]::new);
        return client.preparedQuery(MARK_PUBLISHED).execute(Tuple.of(ids, ts(clock.instant()))).replaceWithVoid();
    }
}
