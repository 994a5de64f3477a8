package dev.idem.pipeline;

import dev.idem.pipeline.InMemoryDatabase.InvalidData;
import dev.idem.pipeline.InMemoryDatabase.LockNotAvailable;
import dev.idem.pipeline.InMemoryDatabase.Outage;
import dev.idem.pipeline.InMemoryDatabase.StatementFailed;
import dev.idem.pipeline.InMemoryDatabase.Stored;
import dev.idem.pipeline.InMemoryDatabase.Tx;
import dev.idem.pipeline.InMemoryDatabase.UniqueViolation;
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
import java.util.function.Predicate;

/**
 * A {@link DedupStore} in memory: the statements of {@link PgDedupStore} on an {@link InMemoryDatabase},
 * whose transactions behave as Postgres's; {@link DedupStoreContract} holds both stores to the same
 * behaviour. A record insert meeting a committed row writes nothing ({@code ON CONFLICT DO NOTHING});
 * every write after a claim is a compare-and-set on the hold it was decided under; the table's
 * constraints hold. What other processes do meanwhile is arranged in {@link StoreFaults}.
 */
final class InMemoryDedupStore implements DedupStore {

    final InMemoryDatabase db;
    private final StoreFaults faults;

    InMemoryDedupStore() {
        this(new InMemoryDatabase());
    }

    InMemoryDedupStore(InMemoryDatabase db) {
        this.db = db;
        this.faults = db.faults;
    }

    @Override
    public <T> Uni<T> transaction(Optional<Duration> lockWait, Function<SqlConnection, Uni<T>> body,
                                  Predicate<T> commit) {
        return db.transaction(lockWait, body, commit);
    }

    @Override
    public Uni<Claim> claim(SqlConnection tx, IdemRequest request, Instant now, Instant leaseUntil, Instant expiresAt,
                            JsonObject payload) {
        String key = DedupStore.batchKey(request);
        return db.statement(tx, List.of(key), true, t -> {
            if (faults.inserting(key) || t.visible(key).isPresent()) {
                return Claim.EXISTS;
            }
            DedupRecord record = new DedupRecord(request.scope(), request.key(), request.fingerprint(),
                    DedupRecord.Status.PROCESSING, null, 1, leaseUntil, now, now, expiresAt);
            stage(t, key, new Stored(record, payload, null, t.id, t.id));
            return Claim.WON;
        }).onFailure(LockNotAvailable.class).recoverWithItem(Claim.LOCKED);
    }

    @Override
    public Uni<Set<String>> recordAll(SqlConnection tx, List<IdemRequest> requests, List<String> results, Instant now,
                                      List<Instant> expiresAt) {
        List<String> keys = requests.stream().map(DedupStore::batchKey).toList();
        return db.statement(tx, keys, true, t -> {
            faults.recording();
            if (new HashSet<>(keys).size() < keys.size()) {
                throw new StatementFailed("ON CONFLICT DO NOTHING met the same key twice in one statement: " + keys);
            }
            Set<String> written = new HashSet<>();
            for (int i = 0; i < requests.size(); i++) {
                IdemRequest request = requests.get(i);
                if (faults.inserting(keys.get(i)) || t.visible(keys.get(i)).isPresent()) {
                    continue;
                }
                DedupRecord record = new DedupRecord(request.scope(), request.key(), request.fingerprint(),
                        DedupRecord.Status.DONE, JsonText.decode(results.get(i)), 1, null, now, now, expiresAt.get(i));
                stage(t, keys.get(i), new Stored(record, null, null, t.id, t.id));
                written.add(keys.get(i));
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
        String key = DedupStore.batchKey(seen.request());
        return db.statement(on, List.of(key), true, t -> {
            faults.takingOver(key, now);
            return t.visible(key).filter(s -> s.record().status() == DedupRecord.Status.PROCESSING
                    && s.record().leaseUntil().equals(seen.until()) && s.record().leaseUntil().isBefore(now)).map(s -> {
                DedupRecord r = s.record();
                stage(t, key, s.change(new DedupRecord(r.scope(), r.key(), r.fingerprint(), r.status(), r.result(),
                        r.attempts() + 1, until, r.createdAt(), now, r.expiresAt()), s.payload(), s.lastError(), t.id));
                return new Lease(seen.request(), s.payload(), until, r.attempts() + 1);
            });
        });
    }

    @Override
    public Uni<Boolean> confirm(SqlConnection tx, Lease held, JsonObject result, Instant now) {
        return ending(tx, held, r -> new DedupRecord(r.scope(), r.key(), r.fingerprint(), DedupRecord.Status.DONE,
                result, r.attempts(), null, r.createdAt(), now, r.expiresAt()), null, true);
    }

    @Override
    public Uni<Boolean> release(SqlClient on, Lease held, Instant retryAt, String error, Instant now) {
        DedupRecord.Status status = retryAt == null ? DedupRecord.Status.FAILED : DedupRecord.Status.PROCESSING;
        return ending(on, held, r -> new DedupRecord(r.scope(), r.key(), r.fingerprint(), status, r.result(),
                r.attempts(), retryAt, r.createdAt(), now, r.expiresAt()), error, false);
    }

    /** The compare-and-set of confirm and release: changes the record while {@code held} is its hold. */
    private Uni<Boolean> ending(SqlClient on, Lease held, Function<DedupRecord, DedupRecord> change, String error,
                                boolean done) {
        String key = DedupStore.batchKey(held.request());
        return db.statement(on, List.of(key), true, t -> t.visible(key).filter(s -> s.record().attempts() == held.attempt()
                && s.record().status() == DedupRecord.Status.PROCESSING && s.record().leaseUntil().equals(held.until()))
                .map(s -> stage(t, key, s.change(change.apply(s.record()), done ? null : s.payload(),
                        done ? s.lastError() : error, t.id))).isPresent());
    }

    @Override
    public Failure classify(Throwable failure) {
        return failure instanceof InvalidData ? Failure.INVALID_DATA
                : failure instanceof LockNotAvailable ? Failure.LOCK_NOT_AVAILABLE
                : failure instanceof UniqueViolation ? Failure.UNIQUE_VIOLATION
                : failure instanceof Outage ? Failure.UNAVAILABLE
                : Failure.OTHER;
    }

    /** Writes {@code stored} in {@code tx}, once it passed the table's constraints. */
    private Stored stage(Tx tx, String key, Stored stored) {
        DedupRecord r = stored.record();
        if (r.status() == DedupRecord.Status.DONE && r.result() == null) {
            throw new StatementFailed("violates dedup_record_done_has_result");
        }
        if (r.status() == DedupRecord.Status.PROCESSING && r.leaseUntil() == null) {
            throw new StatementFailed("violates dedup_record_processing_has_lease");
        }
        String texts = r.scope() + r.key() + r.fingerprint() + stored.lastError();
        if (texts.indexOf('\0') >= 0 || (String.valueOf(r.result()) + stored.payload()).contains("\\u0000")) {
            throw new InvalidData("invalid byte sequence for encoding \"UTF8\": 0x00");
        }
        return db.stage(tx, key, stored);
    }
}
