package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The pipeline's durable layer: the transactions a key's record shares with the work it guards,
 * and every read and write of those records. {@link PgDedupStore} keeps them in Postgres; the
 * unit tests drive the pipeline's branches through an in-memory one.
 *
 * <p>Statements run {@code on} a transaction's connection or, outside one, on {@link #outside()}.
 */
interface DedupStore {

    /** What an attempt to claim a two-phase key found. */
    enum Claim {
        /** The row is new: this transaction owns the key. */
        WON,
        /** A committed row exists: read it. */
        EXISTS,
        /** A concurrent transaction holds the key longer than the caller wanted to wait. */
        LOCKED
    }

    /**
     * Runs {@code body} in one transaction on one connection and commits when {@code commit} says
     * so; a failed body rolls back and fails the Uni.
     */
    <T> Uni<T> transaction(Function<SqlConnection, Uni<T>> body, Predicate<T> commit);

    /** Where statements outside a transaction run. */
    SqlClient outside();

    /**
     * Bounds every lock wait of the transaction to {@code wait}: past it the waiting statement fails
     * as {@link #lockNotAvailable}.
     */
    Uni<Void> boundLockWaits(SqlConnection tx, Duration wait);

    /**
     * Claims a two-phase key: inserts it PROCESSING under {@code leaseUntil}, with the request's
     * {@code payload}; a concurrent insert of the same key waits for the other transaction (the
     * unique key arbitrates) unless {@code wait} bounds that wait.
     */
    Uni<Claim> claim(SqlConnection tx, IdemRequest request, Instant now, Instant leaseUntil, Instant expiresAt,
                     Optional<Duration> wait, JsonObject payload);

    /**
     * Writes the DONE record of each of {@code requests} with its result (encoded JSON), as the
     * transaction's last statement, and answers the {@link #batchKey}s written: a key another
     * transaction committed meanwhile is not among them. Keys are unique within the call.
     */
    Uni<Set<String>> recordAll(SqlConnection tx, List<IdemRequest> requests, List<String> results, Instant now,
                               List<Instant> expiresAt);

    /** The committed records of {@code requests}, by {@link #batchKey}; a key without one is absent. */
    Uni<Map<String, DedupRecord>> findAll(SqlClient on, List<IdemRequest> requests);

    Uni<Optional<DedupRecord>> find(SqlClient on, String scope, String key);

    /** Drops the DONE record of one key so that it can be processed again (repair only); true when one went. */
    Uni<Boolean> forget(String scope, String key);

    /** The hold {@code seen} (a hanging record's) becomes the caller's, valid until {@code until}; empty when someone was first. */
    Uni<Optional<Lease>> takeOver(SqlClient on, Lease seen, Instant until, Instant now);

    /** True when {@code held} was still the record's hold and it is now DONE with {@code result}. */
    Uni<Boolean> confirm(SqlConnection tx, Lease held, JsonObject result, Instant now);

    /**
     * Ends the failed attempt under {@code held}: PROCESSING again under a lease until
     * {@code retryAt} (tried again after it), or FAILED for good when {@code retryAt} is null.
     * True when {@code held} was still the record's hold.
     */
    Uni<Boolean> release(SqlClient on, Lease held, Instant retryAt, String error, Instant now);

    /**
     * Gives a FAILED two-phase record its attempts anew (an operator's re-drive, once the cause is
     * fixed): PROCESSING under a lease already past at {@code now}, with no attempt counted, so that
     * it is hanging and a takeover runs it. Empty when the key has no FAILED two-phase record.
     */
    Uni<Optional<DedupRecord>> reopen(String scope, String key, Instant now);

    /** Two-phase records still PROCESSING after their lease, the longest-hanging first. */
    Uni<List<DedupRecord>> hanging(Instant now, int limit);

    /**
     * What reconciliation asks of the records written since {@code since}: the two-phase ones
     * hanging at {@code now} (PROCESSING past their lease) and the FAILED ones, each counted with
     * up to {@code samples} of their keys; in that order.
     */
    Uni<List<DedupAdmin.Finding>> unfinished(Instant since, Instant now, int samples);

    /** What a failed statement or transaction says about the delivery that ran it. */
    enum Failure {
        /**
         * The store itself failed (refused, cut, restarting, out of resources), as opposed to one
         * delivery's statement: no delivery alone would get past that either.
         */
        UNAVAILABLE,
        /**
         * The database refused a statement for the data it carried (Postgres's class 22, data
         * exception: a NUL in a text, a value out of range; or a NOT NULL or CHECK constraint):
         * the same delivery fails the same way every time, so it is refused rather than retried.
         */
        INVALID_DATA,
        /** A statement waited for a lock longer than {@link #boundLockWaits} allowed. */
        LOCK_NOT_AVAILABLE,
        /**
         * A statement of the work broke a unique constraint of the work's own tables (the
         * pipeline's own inserts never do): the change was made before, under this key or another.
         */
        UNIQUE_VIOLATION,
        /** Anything else: one delivery's statement or work failed. */
        OTHER
    }

    /** What {@code failure} says about the delivery that met it. */
    Failure classify(Throwable failure);

    /** A key's identity within a batch. */
    static String batchKey(IdemRequest request) {
        return batchKey(request.scope(), request.key());
    }

    static String batchKey(String scope, String key) {
        return scope + '\n' + key;
    }
}
