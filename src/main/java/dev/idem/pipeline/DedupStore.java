package dev.idem.pipeline;

import static dev.idem.support.SqlTime.instant;
import static dev.idem.support.SqlTime.ts;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

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

    /**
     * A two-phase claim: the record commits alone, PROCESSING under a lease, and carries its
     * request ({@code payload}) so that whoever takes it over can run the effect again.
     */
    private static final String CLAIM = """
            INSERT INTO dedup_record (scope, key, fingerprint, status, lease_until, created_at, updated_at, expires_at, payload)
            VALUES ($1, $2, $3, 'PROCESSING', $4, $5, $5, $6, $7)
            ON CONFLICT DO NOTHING
            RETURNING 1""";

    /*
     * One-phase records are written once, DONE with their result, as the last statement of the
     * transaction whose work they guard. A key held by another transaction makes the insert wait
     * for it; once that committed, the key is not written and the caller finds that row instead.
     * Many records take their keys as arrays, in key order, so that two transactions sharing keys
     * wait for each other instead of deadlocking.
     */

    private static final String RECORD = """
            INSERT INTO dedup_record (scope, key, fingerprint, status, result, created_at, updated_at, expires_at)
            VALUES ($1, $2, $3, 'DONE', $4::text::jsonb, $5, $5, $6)
            ON CONFLICT DO NOTHING
            RETURNING scope, key""";

    private static final String RECORD_ALL = """
            INSERT INTO dedup_record (scope, key, fingerprint, status, result, created_at, updated_at, expires_at)
            SELECT r.scope, r.key, r.fingerprint, 'DONE', r.result::jsonb, $1, $1, r.expires_at
            FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
                AS r(scope, key, fingerprint, result, expires_at)
            ORDER BY r.key, r.scope
            ON CONFLICT DO NOTHING
            RETURNING scope, key""";

    private static final String COLUMNS =
            "scope, key, fingerprint, status, result, attempts, lease_until, created_at, updated_at, expires_at";

    private static final String FIND = "SELECT " + COLUMNS + " FROM dedup_record WHERE scope = $1 AND key = $2";

    private static final String FIND_ALL = "SELECT " + COLUMNS
            + " FROM dedup_record JOIN unnest($1::text[], $2::text[]) AS c(scope, key) USING (scope, key)";

    /** Only a DONE record: an unfinished one belongs to its lease holder, a FAILED one to reconciliation. */
    private static final String FORGET = "DELETE FROM dedup_record WHERE scope = $1 AND key = $2 AND status = 'DONE'";

    /*
     * Two-phase records. Every write after the claim is a compare-and-set on the lease it was
     * decided under, so of two processes that both think they hold a record, one writes and the
     * other changes nothing.
     */

    /** A hanging record (PROCESSING past its lease) passes to the caller, as one more attempt. */
    private static final String TAKE_OVER = """
            UPDATE dedup_record SET lease_until = $3, attempts = attempts + 1, updated_at = $4
            WHERE scope = $1 AND key = $2 AND status = 'PROCESSING' AND lease_until = $5 AND lease_until < $4
            RETURNING attempts, payload""";

    /** The effect happened: DONE with its result, in the transaction of the local business change. */
    private static final String CONFIRM = """
            UPDATE dedup_record SET status = 'DONE', result = $3, lease_until = NULL, payload = NULL, updated_at = $4
            WHERE scope = $1 AND key = $2 AND status = 'PROCESSING' AND attempts = $5 AND lease_until = $6""";

    /** The attempt failed: PROCESSING with a new lease (tried again after it) or FAILED for good. */
    private static final String RELEASE = """
            UPDATE dedup_record SET status = $3, lease_until = $4, last_error = $5, updated_at = $6
            WHERE scope = $1 AND key = $2 AND status = 'PROCESSING' AND attempts = $7 AND lease_until = $8""";

    /** Served by dedup_record_unfinished_two_phase: only unfinished two-phase records carry a payload. */
    private static final String HANGING = """
            SELECT %s FROM dedup_record
            WHERE payload IS NOT NULL AND status = 'PROCESSING' AND lease_until < $1
            ORDER BY lease_until
            LIMIT $2""".formatted(COLUMNS);

    /**
     * Claims a two-phase key: inserts it PROCESSING; a concurrent insert of the same key waits for
     * the other transaction (the unique index arbitrates) unless {@code wait} bounds that wait.
     */
    public Uni<Claim> claim(SqlConnection tx, IdemRequest request, Instant now, Instant leaseUntil,
                            Instant expiresAt, Optional<Duration> wait, JsonObject payload) {
        Uni<Claim> claim = tx.preparedQuery(CLAIM)
                .execute(Tuple.from(Arrays.asList(request.scope(), request.key(), request.fingerprint(),
                        ts(leaseUntil), ts(now), ts(expiresAt), payload)))
                .map(rows -> rows.rowCount() == 1 ? Claim.CLAIMED : Claim.EXISTS);
        // the bound goes out right before the claim, pipelined, without waiting for its answer: if
        // it failed, so does the claim, in a transaction Postgres has already aborted
        Uni<Claim> bounded = wait
                .map(w -> Uni.combine().all().unis(Transactions.boundLockWaits(tx, w), claim)
                        .asTuple().map(both -> both.getItem2()))
                .orElse(claim);
        return bounded.onFailure(DedupStore::lockNotAvailable).recoverWithItem(Claim.LOCKED);
    }

    /**
     * Writes the DONE record of each of {@code requests} with its result (encoded JSON) and answers
     * the keys written, as {@link #batchKey}s; a key another transaction committed is not among
     * them. Keys must be unique within the call.
     */
    Uni<Set<String>> recordAll(SqlConnection tx, List<IdemRequest> requests, List<String> results, Instant now,
                               List<Instant> expiresAt) {
        Uni<RowSet<Row>> written;
        if (requests.size() == 1) {
            IdemRequest request = requests.get(0);
            written = tx.preparedQuery(RECORD).execute(Tuple.of(request.scope(), request.key(), request.fingerprint(),
                    results.get(0), ts(now), ts(expiresAt.get(0))));
        } else {
            String[] fingerprints = new String[requests.size()];
            OffsetDateTime[] expiries = new OffsetDateTime[requests.size()];
            for (int i = 0; i < requests.size(); i++) {
                fingerprints[i] = requests.get(i).fingerprint();
                expiries[i] = ts(expiresAt.get(i));
            }
            written = tx.preparedQuery(RECORD_ALL).execute(Tuple.tuple().addOffsetDateTime(ts(now))
                    .addArrayOfString(scopes(requests)).addArrayOfString(keys(requests))
                    .addArrayOfString(fingerprints).addArrayOfString(results.toArray(String[]::new))
                    .addArrayOfOffsetDateTime(expiries));
        }
        return written.map(rows -> {
            Set<String> keys = new HashSet<>();
            rows.forEach(row -> keys.add(batchKey(row.getString("scope"), row.getString("key"))));
            return keys;
        });
    }

    /** The committed records of {@code requests}, by {@link #batchKey}; a key without one is absent. */
    Uni<Map<String, DedupRecord>> findAll(SqlClient client, List<IdemRequest> requests) {
        if (requests.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        return client.preparedQuery(FIND_ALL)
                .execute(Tuple.tuple().addArrayOfString(scopes(requests)).addArrayOfString(keys(requests)))
                .map(rows -> {
                    Map<String, DedupRecord> found = new HashMap<>();
                    rows.forEach(row -> {
                        DedupRecord record = toRecord(row);
                        found.put(batchKey(record.scope(), record.key()), record);
                    });
                    return found;
                });
    }

    /** A key's identity within a batch. */
    static String batchKey(IdemRequest request) {
        return batchKey(request.scope(), request.key());
    }

    private static String batchKey(String scope, String key) {
        return scope + '\n' + key;
    }

    private static String[] scopes(List<IdemRequest> requests) {
        return requests.stream().map(IdemRequest::scope).toArray(String[]::new);
    }

    private static String[] keys(List<IdemRequest> requests) {
        return requests.stream().map(IdemRequest::key).toArray(String[]::new);
    }

    public Uni<Optional<DedupRecord>> find(SqlClient client, String scope, String key) {
        return client.preparedQuery(FIND).execute(Tuple.of(scope, key))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(toRecord(rows.iterator().next())));
    }

    /** Drops the DONE record of one key so that it can be processed again (repair only); true when one went. */
    public Uni<Boolean> forget(SqlClient client, String scope, String key) {
        return client.preparedQuery(FORGET).execute(Tuple.of(scope, key)).map(rows -> rows.rowCount() == 1);
    }

    /** The hold {@code seen} (a hanging record's) becomes the caller's, valid until {@code until}; empty when someone was first. */
    Uni<Optional<Lease>> takeOver(SqlClient client, Lease seen, Instant until, Instant now) {
        IdemRequest request = seen.request();
        return client.preparedQuery(TAKE_OVER)
                .execute(Tuple.of(request.scope(), request.key(), ts(until), ts(now), ts(seen.until())))
                .map(rows -> {
                    if (rows.rowCount() == 0) {
                        return Optional.empty();
                    }
                    Row row = rows.iterator().next();
                    return Optional.of(new Lease(request, row.getJsonObject("payload"), until, row.getInteger("attempts")));
                });
    }

    /** True when {@code held} was still the record's hold and it is now DONE with {@code result}. */
    Uni<Boolean> confirm(SqlConnection tx, Lease held, JsonObject result, Instant now) {
        IdemRequest request = held.request();
        return tx.preparedQuery(CONFIRM)
                .execute(Tuple.of(request.scope(), request.key(), result, ts(now), held.attempt(), ts(held.until())))
                .map(rows -> rows.rowCount() == 1);
    }

    /** The failed attempt under {@code held} leaves the record to be tried again after {@code at}. */
    Uni<Boolean> retryLater(SqlClient client, Lease held, Instant at, String error, Instant now) {
        return release(client, held, DedupRecord.Status.PROCESSING, at, error, now);
    }

    /** The record under {@code held} gives up: FAILED, for reconciliation and a person to see. */
    Uni<Boolean> fail(SqlClient client, Lease held, String error, Instant now) {
        return release(client, held, DedupRecord.Status.FAILED, null, error, now);
    }

    private Uni<Boolean> release(SqlClient client, Lease held, DedupRecord.Status status, Instant leaseUntil,
                                 String error, Instant now) {
        IdemRequest request = held.request();
        return client.preparedQuery(RELEASE)
                .execute(Tuple.from(Arrays.asList(request.scope(), request.key(), status.name(), ts(leaseUntil), error,
                        ts(now), held.attempt(), ts(held.until()))))
                .map(rows -> rows.rowCount() == 1);
    }

    /** Two-phase records still PROCESSING after their lease, the longest-hanging first. */
    Uni<List<DedupRecord>> hanging(SqlClient client, Instant now, int limit) {
        return client.preparedQuery(HANGING).execute(Tuple.of(ts(now), limit)).map(rows -> {
            List<DedupRecord> records = new ArrayList<>();
            rows.forEach(row -> records.add(toRecord(row)));
            return records;
        });
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
