package dev.idem.pipeline;

import static dev.idem.pipeline.SqlTime.instant;
import static dev.idem.pipeline.SqlTime.ts;

import io.smallrye.mutiny.Uni;
import io.vertx.core.VertxException;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jboss.logging.Logger;

/** The protocols' SQL on {@code dedup_record}, and the transactions its rows share with the work they guard. */
@ApplicationScoped
class PgDedupStore implements DedupStore {

    private static final String LOCK_NOT_AVAILABLE = "55P03";
    private static final String UNIQUE_VIOLATION = "23505";
    /** NOT NULL and CHECK: the delivery's own data breaks them, whatever else is in the database. */
    private static final Set<String> DATA_CONSTRAINTS = Set.of("23502", "23514");
    private static final Set<String> SERVER_FAILURES = Set.of("08", "53", "57", "58", "XX");
    /**
     * A read-only transaction refused a write: the connection reached a standby, or a primary that
     * was demoted under it (a failover); every delivery would meet it until connections lead to the
     * new primary.
     */
    private static final String READ_ONLY = "25006";

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

    /** {@link #RECORD}, {@link #RECORD_ALL} for {@link #recordAllAndCommit}: a key committed meanwhile fails the insert. */
    private static final String RECORD_PLAIN = RECORD.replace("ON CONFLICT DO NOTHING\n", "");

    private static final String RECORD_ALL = """
            INSERT INTO dedup_record (scope, key, fingerprint, status, result, created_at, updated_at, expires_at)
            SELECT r.scope, r.key, r.fingerprint, 'DONE', r.result::jsonb, $1, $1, r.expires_at
            FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
                AS r(scope, key, fingerprint, result, expires_at)
            ORDER BY r.key, r.scope
            ON CONFLICT DO NOTHING
            RETURNING scope, key""";

    private static final String RECORD_ALL_PLAIN = RECORD_ALL.replace("ON CONFLICT DO NOTHING\n", "");

    static final String COLUMNS =
            "scope, key, fingerprint, status, result, attempts, lease_until, created_at, updated_at, expires_at";

    private static final String FIND_ALL = "SELECT " + COLUMNS
            + " FROM dedup_record JOIN unnest($1::text[], $2::text[]) AS c(scope, key) USING (scope, key)";

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

    private final Pool pool;
    private final OutageLog outage;
    /** Connections whose COMMIT went out: that ends their transaction, committed or not, so no ROLLBACK follows. */
    private final Set<Object> committing = ConcurrentHashMap.newKeySet();

    PgDedupStore(Pool pool, Clock clock) {
        this.pool = pool;
        this.outage = new OutageLog(Logger.getLogger(PgDedupStore.class), clock, "The database",
                "nothing takes effect: REST answers 503 and Kafka records are retried until it is back", "transactions failed");
    }

    /**
     * BEGIN, COMMIT and ROLLBACK go as plain statements, so that each can be pipelined: the body's
     * first statement is sent right behind BEGIN (and the lock wait's bound, in the same message),
     * without waiting for its answer; {@link #recordAllAndCommit} sends COMMIT right behind the
     * records. If BEGIN failed, so does the body. Whatever happens, the transaction is over before
     * the connection goes back to the pool: a failed body is rolled back, unless its COMMIT went out
     * (an aborted transaction's COMMIT rolls it back; a ROLLBACK after it only draws a warning).
     * What is sent in one event-loop turn leaves in one write ({@link OneFlush}).
     */
    @Override
    public <T> Uni<T> transaction(Optional<Duration> lockWait, Function<SqlConnection, Uni<T>> body,
                                  Function<T, Ending> ending) {
        String begin = lockWait.map(wait -> "BEGIN; SET LOCAL lock_timeout = '" + Math.max(1, wait.toMillis()) + "ms'")
                .orElse("BEGIN");
        return pool.withConnection(conn -> {
                    OneFlush.on(conn);
                    return Uni.combine().all()
                            .unis(conn.query(begin).execute(), Uni.createFrom().deferred(() -> body.apply(conn))).asTuple()
                            .map(both -> both.getItem2())
                            .call(result -> switch (ending.apply(result)) {
                                case COMMIT -> conn.query("COMMIT").execute();
                                case ROLLBACK -> conn.query("ROLLBACK").execute();
                                case ENDED -> Uni.createFrom().voidItem();
                            })
                            .onFailure().call(() -> committing.remove(conn.getDelegate()) ? Uni.createFrom().voidItem()
                                    : conn.query("ROLLBACK").execute().onFailure().recoverWithNull())
                            .eventually(() -> committing.remove(conn.getDelegate()));
                })
                .invoke(outage::ok).onFailure(failure -> classify(failure) == Failure.UNAVAILABLE).invoke(outage::failed);
    }

    @Override
    public Uni<Claim> claim(SqlConnection tx, IdemRequest request, Instant now, Instant leaseUntil,
                            Instant expiresAt, JsonObject payload) {
        return tx.preparedQuery(CLAIM)
                .execute(Tuple.from(Arrays.asList(request.scope(), request.key(), request.fingerprint(),
                        ts(leaseUntil), ts(now), ts(expiresAt), payload)))
                .map(rows -> rows.rowCount() == 1 ? Claim.WON : Claim.EXISTS)
                .onFailure(f -> classify(f) == Failure.LOCK_NOT_AVAILABLE).recoverWithItem(Claim.LOCKED);
    }

    @Override
    public Uni<Set<String>> recordAll(SqlConnection tx, List<IdemRequest> requests, List<String> results, Instant now,
                                      List<Instant> expiresAt) {
        return insertRecords(tx, RECORD, RECORD_ALL, requests, results, now, expiresAt).map(rows -> {
            Set<String> keys = new HashSet<>();
            rows.forEach(row -> keys.add(DedupStore.batchKey(row.getString("scope"), row.getString("key"))));
            return keys;
        });
    }

    /** The insert goes without ON CONFLICT, so that a key committed meanwhile aborts the transaction its COMMIT then ends. */
    @Override
    public Uni<Boolean> recordAllAndCommit(SqlConnection tx, List<IdemRequest> requests, List<String> results,
                                           Instant now, List<Instant> expiresAt) {
        Uni<Boolean> written = insertRecords(tx, RECORD_PLAIN, RECORD_ALL_PLAIN, requests, results, now, expiresAt)
                .replaceWith(true)
                .onFailure(failure -> failureOf(failure) == Failure.UNIQUE_VIOLATION).recoverWithItem(false);
        Uni<RowSet<Row>> commit = Uni.createFrom().deferred(() -> {
            committing.add(tx.getDelegate());
            return tx.query("COMMIT").execute();
        });
        return Uni.combine().all().unis(written, commit).asTuple().map(both -> both.getItem1());
    }

    private static Uni<RowSet<Row>> insertRecords(SqlConnection tx, String one, String many, List<IdemRequest> requests,
                                                  List<String> results, Instant now, List<Instant> expiresAt) {
        if (requests.size() == 1) {
            IdemRequest request = requests.get(0);
            return tx.preparedQuery(one).execute(Tuple.of(request.scope(), request.key(), request.fingerprint(),
                    results.get(0), ts(now), ts(expiresAt.get(0))));
        }
        String[] fingerprints = new String[requests.size()];
        OffsetDateTime[] expiries = new OffsetDateTime[requests.size()];
        for (int i = 0; i < requests.size(); i++) {
            fingerprints[i] = requests.get(i).fingerprint();
            expiries[i] = ts(expiresAt.get(i));
        }
        return tx.preparedQuery(many).execute(Tuple.tuple().addOffsetDateTime(ts(now))
                .addArrayOfString(scopes(requests)).addArrayOfString(keys(requests))
                .addArrayOfString(fingerprints).addArrayOfString(results.toArray(String[]::new))
                .addArrayOfOffsetDateTime(expiries));
    }

    @Override
    public Uni<Map<String, DedupRecord>> findAll(SqlClient on, List<IdemRequest> requests) {
        if (requests.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        return on.preparedQuery(FIND_ALL)
                .execute(Tuple.tuple().addArrayOfString(scopes(requests)).addArrayOfString(keys(requests)))
                .map(rows -> {
                    Map<String, DedupRecord> found = new HashMap<>();
                    rows.forEach(row -> {
                        DedupRecord record = toRecord(row);
                        found.put(DedupStore.batchKey(record.scope(), record.key()), record);
                    });
                    return found;
                });
    }

    private static String[] scopes(List<IdemRequest> requests) {
        return requests.stream().map(IdemRequest::scope).toArray(String[]::new);
    }

    private static String[] keys(List<IdemRequest> requests) {
        return requests.stream().map(IdemRequest::key).toArray(String[]::new);
    }

    @Override
    public Uni<Optional<Lease>> takeOver(SqlClient on, Lease seen, Instant until, Instant now) {
        IdemRequest request = seen.request();
        return on.preparedQuery(TAKE_OVER)
                .execute(Tuple.of(request.scope(), request.key(), ts(until), ts(now), ts(seen.until())))
                .map(rows -> {
                    if (rows.rowCount() == 0) {
                        return Optional.empty();
                    }
                    Row row = rows.iterator().next();
                    return Optional.of(new Lease(request, row.getJsonObject("payload"), until, row.getInteger("attempts")));
                });
    }

    @Override
    public Uni<Boolean> confirm(SqlConnection tx, Lease held, JsonObject result, Instant now) {
        IdemRequest request = held.request();
        return tx.preparedQuery(CONFIRM)
                .execute(Tuple.of(request.scope(), request.key(), result, ts(now), held.attempt(), ts(held.until())))
                .map(rows -> rows.rowCount() == 1);
    }

    @Override
    public Uni<Boolean> release(SqlClient on, Lease held, Instant retryAt, String error, Instant now) {
        IdemRequest request = held.request();
        DedupRecord.Status status = retryAt == null ? DedupRecord.Status.FAILED : DedupRecord.Status.PROCESSING;
        return on.preparedQuery(RELEASE)
                .execute(Tuple.from(Arrays.asList(request.scope(), request.key(), status.name(), ts(retryAt), error,
                        ts(now), held.attempt(), ts(held.until()))))
                .map(rows -> rows.rowCount() == 1);
    }

    /** Postgres classes 08, 53, 57, 58 and XX, a cut connection or no answer in time: the store failed. */
    @Override
    public Failure classify(Throwable failure) {
        return failureOf(failure);
    }

    static Failure failureOf(Throwable failure) {
        if (failure instanceof PgException pg) {
            String state = pg.getSqlState();
            if (state == null || state.length() < 2 || SERVER_FAILURES.contains(state.substring(0, 2))
                    || READ_ONLY.equals(state)) {
                return Failure.UNAVAILABLE;
            }
            return state.startsWith("22") || DATA_CONSTRAINTS.contains(state) ? Failure.INVALID_DATA
                    : LOCK_NOT_AVAILABLE.equals(state) ? Failure.LOCK_NOT_AVAILABLE
                    : UNIQUE_VIOLATION.equals(state) ? Failure.UNIQUE_VIOLATION
                    : Failure.OTHER;
        }
        return failure instanceof IOException || failure instanceof VertxException
                || failure instanceof TimeoutException ? Failure.UNAVAILABLE : Failure.OTHER;
    }

    static DedupRecord toRecord(Row row) {
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
