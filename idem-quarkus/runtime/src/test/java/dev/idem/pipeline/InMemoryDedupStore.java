package dev.idem.pipeline;

import dev.idem.pipeline.InMemoryDatabase.Stored;
import dev.idem.pipeline.InMemoryDatabase.Tx;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * The {@link DedupStore} of the protocols' tests and the kit: {@link PgDedupStore}'s statements on
 * the {@code dedup_record} table of an {@link InMemoryDatabase}, whose transactions behave as
 * Postgres's. {@link DedupStoreContract} holds both stores to the same answers.
 */
final class InMemoryDedupStore implements DedupStore {

    private final InMemoryDatabase db;

    InMemoryDedupStore(InMemoryDatabase db) {
        this.db = db;
    }

    @Override
    public <T> Uni<T> transaction(Optional<Duration> lockWait, Function<SqlConnection, Uni<T>> body,
                                  Function<T, Ending> ending) {
        return db.transaction(lockWait, body, ending);
    }

    @Override
    public Uni<Claim> claim(SqlConnection tx, IdemRequest request, Instant now, Instant leaseUntil, Instant expiresAt,
                            JsonObject payload) {
        return db.statement(tx, List.of(DedupStore.batchKey(request)), true, t -> inserted(t, new DedupRecord(request.scope(),
                request.key(), request.fingerprint(), DedupRecord.Status.PROCESSING, null, 1, leaseUntil, now, now,
                expiresAt), payload) ? Claim.WON : Claim.EXISTS)
                .onFailure(f -> classify(f) == Failure.LOCK_NOT_AVAILABLE).recoverWithItem(Claim.LOCKED);
    }

    @Override
    public Uni<Set<String>> recordAll(SqlConnection tx, List<IdemRequest> requests, List<String> results, Instant now,
                                      List<Instant> expiresAt) {
        return insertRecords(tx, requests, results, now, expiresAt, false);
    }

    @Override
    public Uni<Boolean> recordAllAndCommit(SqlConnection tx, List<IdemRequest> requests, List<String> results,
                                           Instant now, List<Instant> expiresAt) {
        return insertRecords(tx, requests, results, now, expiresAt, true).replaceWith(true)
                .onFailure(failure -> classify(failure) == Failure.UNIQUE_VIOLATION).recoverWithItem(false)
                .call(() -> db.commit(tx));
    }

    /** The records' INSERT: a key with a row is not written, or, {@code plain} (no ON CONFLICT), fails it. */
    private Uni<Set<String>> insertRecords(SqlConnection tx, List<IdemRequest> requests, List<String> results, Instant now,
                                           List<Instant> expiresAt, boolean plain) {
        List<String> keys = requests.stream().map(DedupStore::batchKey).toList();
        return db.statement(tx, keys, true, t -> {
            db.faults.recording();
            Set<String> written = new HashSet<>();
            for (int i = 0; i < requests.size(); i++) {
                IdemRequest r = requests.get(i);
                if (inserted(t, new DedupRecord(r.scope(), r.key(), r.fingerprint(), DedupRecord.Status.DONE,
                        JsonText.decode(results.get(i)), 1, null, now, now, expiresAt.get(i)), null)) {
                    written.add(keys.get(i));
                } else if (plain) {
                    throw InMemoryDatabase.failure("23505", "duplicate key value violates unique constraint on " + keys.get(i));
                }
            }
            return written;
        });
    }

    @Override
    public Uni<Map<String, DedupRecord>> findAll(SqlClient on, List<IdemRequest> requests) {
        List<String> keys = requests.stream().map(DedupStore::batchKey).toList();
        return db.statement(on, keys, false, t -> {
            Map<String, DedupRecord> found = new HashMap<>();
            keys.forEach(key -> t.visible(key).ifPresent(stored -> found.put(key, stored.record())));
            return found;
        });
    }

    @Override
    public Uni<Optional<Lease>> takeOver(SqlClient on, Lease seen, Instant until, Instant now) {
        return swap(on, seen, true, now, DedupRecord.Status.PROCESSING, null, until, null)
                .map(taken -> taken.map(s -> new Lease(seen.request(), s.payload(), until, s.record().attempts())));
    }

    @Override
    public Uni<Boolean> confirm(SqlConnection tx, Lease held, JsonObject result, Instant now) {
        return swap(tx, held, false, now, DedupRecord.Status.DONE, result, null, null).map(Optional::isPresent);
    }

    @Override
    public Uni<Boolean> release(SqlClient on, Lease held, Instant retryAt, String error, Instant now) {
        DedupRecord.Status status = retryAt == null ? DedupRecord.Status.FAILED : DedupRecord.Status.PROCESSING;
        return swap(on, held, false, now, status, null, retryAt, error).map(Optional::isPresent);
    }

    /**
     * The UPDATE of a claimed key, as {@link PgDedupStore}'s three: while the row is PROCESSING under {@code hold}'s
     * lease and attempt (or, taken over, past that lease), it gets {@code status} and {@code leaseUntil}, a takeover
     * a new attempt, DONE its {@code result} without the payload.
     */
    private Uni<Optional<Stored>> swap(SqlClient on, Lease hold, boolean takeOver, Instant now, DedupRecord.Status status,
                                       JsonObject result, Instant leaseUntil, String error) {
        String key = DedupStore.batchKey(hold.request());
        boolean done = status == DedupRecord.Status.DONE;
        return db.statement(on, List.of(key), true, t -> {
            if (takeOver) {
                db.faults.takingOver(key, now);
            }
            return t.visible(key).filter(s -> s.record().status() == DedupRecord.Status.PROCESSING
                    && s.record().leaseUntil().equals(hold.until())
                    && (takeOver ? hold.until().isBefore(now) : s.record().attempts() == hold.attempt())).map(s -> {
                DedupRecord r = s.record();
                return t.stage(key, new Stored(new DedupRecord(r.scope(), r.key(), r.fingerprint(), status,
                        done ? result : r.result(), r.attempts() + (takeOver ? 1 : 0), leaseUntil, r.createdAt(), now,
                        r.expiresAt()), done ? null : s.payload(), error == null ? s.lastError() : error, s.writtenIn(), t.id));
            });
        });
    }

    @Override
    public Failure classify(Throwable failure) {
        return PgDedupStore.failureOf(failure);
    }

    /** Inserts {@code record} in {@code tx} unless its key has a row: true when it did. */
    private boolean inserted(Tx tx, DedupRecord record, JsonObject payload) {
        String key = DedupStore.batchKey(record.scope(), record.key());
        if (db.faults.inserting(key) || tx.visible(key).isPresent()) {
            return false;
        }
        tx.stage(key, new Stored(record, payload, null, tx.id, tx.id));
        return true;
    }
}
