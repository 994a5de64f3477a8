package dev.idem.pipeline;

import static dev.idem.support.SqlTime.instant;
import static dev.idem.support.SqlTime.ts;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** All SQL on {@code dedup_record}. */
@ApplicationScoped
public class DedupStore {

    /** What an attempt to claim a key found. */
    public enum Claim {
        /** The row is new: this transaction owns the key. */
        CLAIMED,
        /** A committed row exists: read it. */
        EXISTS,
        /** A concurrent transaction holds the key longer than the caller wanted to wait. */
        LOCKED
    }

    private static final String LOCK_NOT_AVAILABLE = "55P03";

    private static final String CLAIM = """
            INSERT INTO dedup_record (scope, key, fingerprint, status, lease_until, created_at, updated_at, expires_at)
            VALUES ($1, $2, $3, 'PROCESSING', $4, $5, $5, $6)
            ON CONFLICT DO NOTHING
            RETURNING 1""";

    private static final String COMPLETE = """
            UPDATE dedup_record SET status = 'DONE', result = $3, lease_until = NULL, updated_at = $4
            WHERE scope = $1 AND key = $2""";

    private static final String FIND = """
            SELECT scope, key, fingerprint, status, result, attempts, lease_until, created_at, updated_at, expires_at
            FROM dedup_record WHERE scope = $1 AND key = $2""";

    /**
     * Inserts the key as PROCESSING; a concurrent insert of the same key waits for the other
     * transaction (the unique index arbitrates) unless {@code wait} bounds that wait.
     */
    public Uni<Claim> claim(SqlConnection tx, IdemRequest request, Instant now, Instant leaseUntil,
                            Instant expiresAt, Optional<Duration> wait) {
        Uni<Void> bound = wait
                .map(w -> tx.query("SET LOCAL lock_timeout = '" + Math.max(1, w.toMillis()) + "ms'")
                        .execute().replaceWithVoid())
                .orElse(Uni.createFrom().voidItem());
        return bound
                .chain(() -> tx.preparedQuery(CLAIM).execute(Tuple.of(request.scope(), request.key(),
                        request.fingerprint(), ts(leaseUntil), ts(now), ts(expiresAt))))
                .map(rows -> rows.rowCount() == 1 ? Claim.CLAIMED : Claim.EXISTS)
                .onFailure(DedupStore::lockNotAvailable).recoverWithItem(Claim.LOCKED);
    }

    public Uni<Void> complete(SqlConnection tx, IdemRequest request, JsonObject result, Instant now) {
        return tx.preparedQuery(COMPLETE)
                .execute(Tuple.of(request.scope(), request.key(), result, ts(now)))
                .replaceWithVoid();
    }

    public Uni<Optional<DedupRecord>> find(SqlClient client, String scope, String key) {
        return client.preparedQuery(FIND).execute(Tuple.of(scope, key))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(toRecord(rows.iterator().next())));
    }

    private static boolean lockNotAvailable(Throwable failure) {
        return failure instanceof PgException pg && LOCK_NOT_AVAILABLE.equals(pg.getSqlState());
    }

    private static DedupRecord toRecord(Row row) {
        return new DedupRecord(
                row.getString("scope"),
                row.getString("key"),
                row.getString("fingerprint"),
                DedupRecord.Status.valueOf(row.getString("status")),
                row.getJsonObject("result"),
                row.getInteger("attempts"),
                instant(row, "lease_until"),
                instant(row, "created_at"),
                instant(row, "updated_at"),
                instant(row, "expires_at"));
    }
}
