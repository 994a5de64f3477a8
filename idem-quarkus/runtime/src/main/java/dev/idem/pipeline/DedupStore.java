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

/**
 * What the protocols need of the durable layer, and nothing more: the transactions a key's record
 * shares with the work it guards, the one-phase record's write and lookup, the two-phase lease's
 * compare-and-sets, and what a failure means. {@link PgDedupStore} keeps the records in Postgres;
 * the unit tests drive the protocols' branches through an in-memory one. What operators and jobs
 * do with records (recovery's and reconciliation's queries, a key's trail, repair) is
 * {@link DedupRecords}'.
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

    /** How a transaction ends once its body answered. */
    enum Ending {
        COMMIT,
        ROLLBACK,
        /** The body ended it itself ({@link #recordAllAndCommit}). */
        ENDED;

        static Ending commitIf(boolean commit) {
            return commit ? COMMIT : ROLLBACK;
        }
    }

    /**
     * Runs {@code body} in one transaction on one connection and ends it as {@code ending} says; a
     * failed body rolls back and fails the Uni. {@code lockWait} bounds every lock wait of the
     * transaction: past it the waiting statement fails as {@link Failure#LOCK_NOT_AVAILABLE}.
     */
    <T> Uni<T> transaction(Optional<Duration> lockWait, Function<SqlConnection, Uni<T>> body, Function<T, Ending> ending);

    /**
     * Claims a two-phase key: inserts it PROCESSING under {@code leaseUntil}, with the request's
     * {@code payload}; a concurrent insert of the same key waits for the other transaction (the
     * unique key arbitrates), {@link Claim#LOCKED} past the transaction's lock wait.
     */
    Uni<Claim> claim(SqlConnection tx, IdemRequest request, Instant now, Instant leaseUntil, Instant expiresAt,
                     JsonObject payload);

    /**
     * Writes the DONE record of each of {@code requests} with its result (encoded JSON), as the
     * transaction's last statement, and answers the {@link #batchKey}s written: a key another
     * transaction committed meanwhile is not among them. Keys are unique within the call.
     */
    Uni<Set<String>> recordAll(SqlConnection tx, List<IdemRequest> requests, List<String> results, Instant now,
                               List<Instant> expiresAt);

    /**
     * As {@link #recordAll}, and the transaction's COMMIT goes right behind the records, without
     * waiting for their answer: one round trip less. True when every record was written and the
     * transaction committed; false when a key had met another transaction's committed row, and
     * nothing committed. The transaction is over either way (unless the Uni fails).
     */
    Uni<Boolean> recordAllAndCommit(SqlConnection tx, List<IdemRequest> requests, List<String> results, Instant now,
                                    List<Instant> expiresAt);

    /** The committed records of {@code requests}, by {@link #batchKey}; a key without one is absent. */
    Uni<Map<String, DedupRecord>> findAll(SqlClient on, List<IdemRequest> requests);

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
        /** A statement waited for a lock longer than the transaction's lock wait allowed. */
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
