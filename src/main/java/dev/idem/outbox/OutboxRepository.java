package dev.idem.outbox;

import static dev.idem.support.SqlTime.ts;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/** All SQL on {@code outbox_event}. */
@ApplicationScoped
public class OutboxRepository {

    /** One event per (topic, key): appending it again is a no-op, not an error. */
    private static final String APPEND = """
            INSERT INTO outbox_event (topic, event_key, payload, created_at)
            VALUES ($1, $2, $3, $4)
            ON CONFLICT ON CONSTRAINT outbox_event_one_per_key DO NOTHING""";

    /** Oldest first; rows another relay is publishing are skipped, not waited for. */
    private static final String CLAIM = """
            SELECT id, topic, event_key, payload::text AS payload FROM outbox_event
            WHERE published_at IS NULL ORDER BY id LIMIT $1
            FOR UPDATE SKIP LOCKED""";

    private static final String MARK_PUBLISHED = "UPDATE outbox_event SET published_at = $2 WHERE id = ANY($1)";

    private final Clock clock;

    OutboxRepository(Clock clock) {
        this.clock = clock;
    }

    /** Appends an event in the caller's transaction, so it exists exactly when the change does. */
    public Uni<Void> append(SqlConnection tx, String topic, String key, JsonObject payload) {
        return tx.preparedQuery(APPEND).execute(Tuple.of(topic, key, payload, ts(clock.instant())))
                .replaceWithVoid();
    }

    /** Locks up to {@code limit} unpublished events for the caller's transaction. */
    Uni<List<OutboxEvent>> claim(SqlConnection tx, int limit) {
        return tx.preparedQuery(CLAIM).execute(Tuple.of(limit)).map(rows -> {
            List<OutboxEvent> events = new ArrayList<>(rows.size());
            for (Row row : rows) {
                events.add(new OutboxEvent(row.getLong("id"), row.getString("topic"), row.getString("event_key"),
                        row.getString("payload")));
            }
            return events;
        });
    }

    Uni<Void> markPublished(SqlClient client, List<OutboxEvent> events) {
        Long[] ids = events.stream().map(OutboxEvent::id).toArray(Long[]::new);
        return client.preparedQuery(MARK_PUBLISHED).execute(Tuple.of(ids, ts(clock.instant()))).replaceWithVoid();
    }
}
