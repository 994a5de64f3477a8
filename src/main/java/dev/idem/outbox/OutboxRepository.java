package dev.idem.outbox;

import static dev.idem.support.SqlTime.ts;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;

/** All SQL on {@code outbox_event}. */
@ApplicationScoped
public class OutboxRepository {

    /** One event per (topic, key): appending it again is a no-op, not an error. */
    private static final String APPEND = """
            INSERT INTO outbox_event (topic, event_key, payload, created_at)
            VALUES ($1, $2, $3, $4)
            ON CONFLICT ON CONSTRAINT outbox_event_one_per_key DO NOTHING""";

    private final Clock clock;

    OutboxRepository(Clock clock) {
        this.clock = clock;
    }

    /** Appends an event in the caller's transaction, so it exists exactly when the change does. */
    public Uni<Void> append(SqlConnection tx, String topic, String key, JsonObject payload) {
        return tx.preparedQuery(APPEND).execute(Tuple.of(topic, key, payload, ts(clock.instant())))
                .replaceWithVoid();
    }
}
