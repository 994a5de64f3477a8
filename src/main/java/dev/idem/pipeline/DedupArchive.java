package dev.idem.pipeline;

import static dev.idem.support.SqlTime.instant;
import static dev.idem.support.SqlTime.ts;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * All SQL on {@code dedup_record_archive}, including the move out of the hot table. Only DONE
 * records move: unfinished and FAILED ones stay where recovery and reconciliation look.
 */
@ApplicationScoped
public class DedupArchive {

    /**
     * One bounded batch in one statement: rows being used by a delivery right now are skipped,
     * not waited for, so archiving never holds up traffic; a delivery that waited on a row that
     * moved claims the key afresh and meets the state machine.
     */
    private static final String MOVE = """
            WITH batch AS (
                SELECT scope, key FROM dedup_record
                WHERE expires_at < $1 AND status = 'DONE'
                ORDER BY expires_at LIMIT $2
                FOR UPDATE SKIP LOCKED),
            moved AS (
                DELETE FROM dedup_record d USING batch
                WHERE d.scope = batch.scope AND d.key = batch.key
                RETURNING d.scope, d.key, d.fingerprint, d.status, d.result, d.attempts, d.lease_until,
                          d.created_at, d.updated_at, d.expires_at)
            INSERT INTO dedup_record_archive
                (scope, key, fingerprint, status, result, attempts, lease_until, created_at, updated_at, expires_at, archived_at)
            SELECT scope, key, fingerprint, status, result, attempts, lease_until, created_at, updated_at, expires_at, $1
            FROM moved
            ON CONFLICT ON CONSTRAINT dedup_record_archive_pk DO NOTHING""";

    private static final String FIND = """
            SELECT scope, key, fingerprint, status, result, attempts, lease_until, created_at, updated_at, expires_at, archived_at
            FROM dedup_record_archive WHERE scope = $1 AND key = $2 ORDER BY created_at""";

    /** Moves up to {@code limit} expired DONE records; answers how many moved. */
    public Uni<Integer> moveExpired(SqlClient client, Instant now, int limit) {
        return client.preparedQuery(MOVE).execute(Tuple.of(ts(now), limit)).map(rows -> rows.rowCount());
    }

    /** The archived records of one key, oldest first, each with when it was archived. */
    public Uni<List<Archived>> find(SqlClient client, String scope, String key) {
        return client.preparedQuery(FIND).execute(Tuple.of(scope, key)).map(rows -> {
            List<Archived> out = new ArrayList<>();
            for (Row row : rows) {
                out.add(new Archived(new DedupRecord(row.getString("scope"), row.getString("key"),
                        row.getString("fingerprint"), DedupRecord.Status.valueOf(row.getString("status")),
                        row.getJsonObject("result"), row.getInteger("attempts"), instant(row, "lease_until"),
                        instant(row, "created_at"), instant(row, "updated_at"), instant(row, "expires_at")),
                        instant(row, "archived_at")));
            }
            return out;
        });
    }

    public record Archived(DedupRecord record, Instant archivedAt) {}
}
