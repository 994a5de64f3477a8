package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * A {@link DedupStore} in memory whose transactions behave as Postgres's ({@link DedupStoreContract}):
 * writes are a transaction's own until it commits; a key it wrote makes another's write wait until it
 * ends; after a failed statement the rest fail. Business rows show whose work took effect; what other
 * processes do meanwhile is {@link StoreFaults}'. Its SQL handles run no SQL.
 */
final class InMemoryDatabase implements DedupStore {

    /** The transaction id of rows that another process wrote. */
    static final long ANOTHER = 0;

    /** A failed statement or transaction, with what it means. */
    static final class Failed extends RuntimeException {
        final Failure kind;

        Failed(Failure kind, String message) {
            super(message);
            this.kind = kind;
        }
    }

    /** A dedup row as stored, with the transaction that inserted it and the last that changed it. */
    record Stored(DedupRecord record, JsonObject payload, String lastError, long writtenIn, long changedIn) {}

    enum Ending { OPEN, COMMITTED, ROLLED_BACK, FAILED }

    final class Tx {
        final long id = transactions.size() + 1;
        final SqlConnection handle = new SqlConnection(placeholder("transaction " + id));
        final Map<String, Stored> staged = new LinkedHashMap<>();
        /** What its commit applies besides its records: business rows by name, a repository's changes. */
        final Map<Object, Runnable> atCommit = new LinkedHashMap<>();
        /** The dedup keys it looked up or wrote, in that order. */
        final Set<String> touched = new LinkedHashSet<>();
        final CompletableFuture<Void> ended = new CompletableFuture<>();
        final CompletableFuture<Void> endGate =
                Objects.requireNonNullElse(faults.endGate(), CompletableFuture.completedFuture(null));
        Duration lockWait;
        RuntimeException aborted;
        Ending ending = Ending.OPEN;

        Optional<Stored> visible(String key) {
            return Optional.ofNullable(staged.getOrDefault(key, committed.get(key)));
        }
    }

    final StoreFaults faults = new StoreFaults(this);
    private final Map<String, Stored> committed = new LinkedHashMap<>();
    private final Map<String, String> rows = new LinkedHashMap<>();
    private final List<Tx> transactions = new ArrayList<>();
    private int waiting;

    Optional<Stored> committed(IdemRequest request) {
        return Optional.ofNullable(committedRecords().get(DedupStore.batchKey(request)));
    }

    synchronized Map<String, Stored> committedRecords() {
        return new LinkedHashMap<>(committed);
    }

    /** The committed business rows. */
    synchronized Map<String, String> rows() {
        return new LinkedHashMap<>(rows);
    }

    /** The transactions begun, in that order. */
    synchronized List<Tx> transactions() {
        return new ArrayList<>(transactions);
    }

    /** How many statements wait for another transaction's key. */
    synchronized int waiting() {
        return waiting;
    }

    /** A record another process committed. */
    synchronized void seed(DedupRecord record, JsonObject payload) {
        committed.put(DedupStore.batchKey(record.scope(), record.key()), new Stored(record, payload, null, ANOTHER, ANOTHER));
    }

    /** The business statement of a test's work: {@code name} set to {@code value} in {@code tx}. */
    Uni<Void> write(SqlConnection tx, String name, String value) {
        return row(tx, name, value, false);
    }

    /** An insert under the work's own unique constraint: fails as Postgres does when the row is there. */
    Uni<Void> insert(SqlConnection tx, String name, String value) {
        return row(tx, name, value, true);
    }

    private Uni<Void> row(SqlConnection tx, String name, String value, boolean unique) {
        return statement(tx, List.of(), false, t -> {
            faults.writing(name);
            if (unique && (t.atCommit.containsKey(name) || rows.containsKey(name))) {
                throw new Failed(Failure.UNIQUE_VIOLATION, "duplicate key value violates unique constraint on " + name);
            }
            return t.atCommit.put(name, () -> rows.put(name, value));
        }).replaceWithVoid();
    }

    /** A statement of a test's repository in {@code tx}, failing as any would: {@code change} runs if it commits. */
    Uni<Void> atCommit(SqlConnection tx, Runnable change) {
        Objects.requireNonNull(change, "change");
        return statement(tx, List.of(), false, t -> t.atCommit.put(new Object(), change)).replaceWithVoid();
    }

    @Override
    public <T> Uni<T> transaction(Optional<Duration> lockWait, Function<SqlConnection, Uni<T>> body, Predicate<T> commit) {
        return Uni.createFrom().deferred(() -> {
            Tx tx = begin(lockWait.orElse(null));
            return Uni.createFrom().deferred(() -> body.apply(tx.handle))
                    .onItemOrFailure().call(() -> Uni.createFrom().completionStage(tx.endGate))
                    .invoke(result -> end(tx, commit.test(result) ? Ending.COMMITTED : Ending.ROLLED_BACK))
                    .onFailure().invoke(f -> end(tx, Ending.FAILED));
        });
    }

    private synchronized Tx begin(Duration lockWait) {
        if (faults.down()) {
            throw new Failed(Failure.UNAVAILABLE, "connection refused");
        }
        Tx tx = new Tx();
        tx.lockWait = lockWait;
        transactions.add(tx);
        return tx;
    }

    /** Ends {@code tx} as {@code ending} unless it ended: a COMMIT or ROLLBACK that fails leaves it to end FAILED. */
    private void end(Tx tx, Ending ending) {
        synchronized (this) {
            if (tx.ending != Ending.OPEN) {
                return;
            }
            if (ending != Ending.FAILED && faults.down()) {
                throw new Failed(Failure.UNAVAILABLE, "connection lost at the end of transaction " + tx.id);
            }
            if (ending == Ending.COMMITTED && tx.aborted != null) {
                throw new Failed(Failure.OTHER, "COMMIT of an aborted transaction rolled back: " + tx.aborted.getMessage());
            }
            tx.ending = ending;
            if (ending == Ending.COMMITTED) {
                committed.putAll(tx.staged);
                tx.atCommit.values().forEach(Runnable::run);
            }
        }
        tx.ended.complete(null);
    }

    /** A statement of {@code on}'s transaction on {@code keys}; one that {@code writes} them waits for their holders. */
    private <T> Uni<T> statement(SqlClient on, List<String> keys, boolean writes, Function<Tx, T> body) {
        return Uni.createFrom().deferred(() -> {
            Tx tx;
            synchronized (this) {
                WatchedConnection.count(on);
                Object core = WatchedConnection.core(on);
                tx = transactions.stream().filter(t -> t.handle.getDelegate() == core).findFirst().orElseThrow(() ->
                        new IllegalArgumentException(on + " is not a connection this store gave: pass the work's own"));
                tx.touched.addAll(keys);
            }
            return afterLocks(tx, writes ? keys : List.of(), body);
        });
    }

    private <T> Uni<T> afterLocks(Tx tx, List<String> keys, Function<Tx, T> body) {
        CompletableFuture<Void> holderEnds;
        synchronized (this) {
            if (tx.ending != Ending.OPEN || tx.aborted != null) {
                throw new Failed(Failure.OTHER, tx.ending != Ending.OPEN ? "transaction " + tx.id + " already ended"
                        : "current transaction is aborted, commands ignored until end of transaction block");
            }
            if (faults.down()) {
                throw new Failed(Failure.UNAVAILABLE, "connection refused");
            }
            holderEnds = keys.stream().flatMap(key -> faults.lockedByAnother(key) ? Stream.of(StoreFaults.NEVER)
                    : transactions.stream().filter(o -> o != tx && o.ending == Ending.OPEN && o.staged.containsKey(key))
                    .map(o -> o.ended)).findFirst().orElse(null);
            if (holderEnds == null) {
                try {
                    return Uni.createFrom().item(body.apply(tx));
                } catch (RuntimeException failure) {
                    throw abort(tx, failure);
                }
            }
            waiting++;
        }
        Uni<Void> waited = Uni.createFrom().completionStage(holderEnds.copy()); // a waiter giving up cancels its copy
        if (tx.lockWait != null) {
            waited = waited.ifNoItem().after(tx.lockWait).failWith(() -> abort(tx,
                    new Failed(Failure.LOCK_NOT_AVAILABLE, "canceling statement due to lock timeout: " + keys)));
        }
        return waited.onTermination().invoke(() -> {
            synchronized (this) {
                waiting--;
            }
        }).chain(() -> afterLocks(tx, keys, body));
    }

    private synchronized RuntimeException abort(Tx tx, RuntimeException failure) {
        tx.aborted = failure;
        return failure;
    }

    @Override
    public Uni<Claim> claim(SqlConnection tx, IdemRequest request, Instant now, Instant leaseUntil, Instant expiresAt,
                            JsonObject payload) {
        return statement(tx, List.of(DedupStore.batchKey(request)), true, t -> inserted(t, new DedupRecord(request.scope(),
                request.key(), request.fingerprint(), DedupRecord.Status.PROCESSING, null, 1, leaseUntil, now, now,
                expiresAt), payload) ? Claim.WON : Claim.EXISTS)
                .onFailure(f -> classify(f) == Failure.LOCK_NOT_AVAILABLE).recoverWithItem(Claim.LOCKED);
    }

    @Override
    public Uni<Set<String>> recordAll(SqlConnection tx, List<IdemRequest> requests, List<String> results, Instant now,
                                      List<Instant> expiresAt) {
        List<String> keys = requests.stream().map(DedupStore::batchKey).toList();
        return statement(tx, keys, true, t -> {
            faults.recording();
            Set<String> written = new HashSet<>();
            for (int i = 0; i < requests.size(); i++) {
                IdemRequest r = requests.get(i);
                if (inserted(t, new DedupRecord(r.scope(), r.key(), r.fingerprint(), DedupRecord.Status.DONE,
                        JsonText.decode(results.get(i)), 1, null, now, now, expiresAt.get(i)), null)) {
                    written.add(keys.get(i));
                }
            }
            return written;
        });
    }

    @Override
    public Uni<Map<String, DedupRecord>> findAll(SqlClient on, List<IdemRequest> requests) {
        List<String> keys = requests.stream().map(DedupStore::batchKey).toList();
        return statement(on, keys, false, t -> {
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
        return statement(on, List.of(key), true, t -> {
            if (takeOver) {
                faults.takingOver(key, now);
            }
            return t.visible(key).filter(s -> s.record().status() == DedupRecord.Status.PROCESSING
                    && s.record().leaseUntil().equals(hold.until())
                    && (takeOver ? hold.until().isBefore(now) : s.record().attempts() == hold.attempt())).map(s -> {
                DedupRecord r = s.record();
                return stage(t, key, new Stored(new DedupRecord(r.scope(), r.key(), r.fingerprint(), status,
                        done ? result : r.result(), r.attempts() + (takeOver ? 1 : 0), leaseUntil, r.createdAt(), now,
                        r.expiresAt()), done ? null : s.payload(), error == null ? s.lastError() : error, s.writtenIn(), t.id));
            });
        });
    }

    @Override
    public Failure classify(Throwable failure) {
        return failure instanceof Failed failed ? failed.kind : Failure.OTHER;
    }

    /** Inserts {@code record} in {@code tx} unless its key has a row: true when it did. */
    private boolean inserted(Tx tx, DedupRecord record, JsonObject payload) {
        String key = DedupStore.batchKey(record.scope(), record.key());
        if (faults.inserting(key) || tx.visible(key).isPresent()) {
            return false;
        }
        stage(tx, key, new Stored(record, payload, null, tx.id, tx.id));
        return true;
    }

    /** Writes {@code stored} in {@code tx}, once it passed the table's constraints. */
    private Stored stage(Tx tx, String key, Stored stored) {
        DedupRecord r = stored.record();
        boolean done = r.status() == DedupRecord.Status.DONE;
        if (done ? r.result() == null : r.status() == DedupRecord.Status.PROCESSING && r.leaseUntil() == null) {
            throw new Failed(Failure.OTHER, "violates check constraint dedup_record_"
                    + (done ? "done_has_result" : "processing_has_lease"));
        }
        if ((r.scope() + r.key() + r.fingerprint() + stored.lastError()).indexOf('\0') >= 0
                || (String.valueOf(r.result()) + stored.payload()).contains("\\u0000")) {
            throw new Failed(Failure.INVALID_DATA, "invalid byte sequence for encoding \"UTF8\": 0x00");
        }
        tx.staged.put(key, stored);
        return stored;
    }

    /** A SQL handle that only names a transaction: any use of it fails, saying how a work is tested instead. */
    private static io.vertx.sqlclient.SqlConnection placeholder(String name) {
        Class<?> type = io.vertx.sqlclient.SqlConnection.class;
        return (io.vertx.sqlclient.SqlConnection) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (proxy, method, args) -> switch (method.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> name;
                    default -> throw new UnsupportedOperationException("PipelineKit's in-memory database runs no SQL ("
                            + method.getName() + "() on " + name + "): hand changes to PipelineKit.Database#write; "
                            + "test SQL with @QuarkusTest.");
                });
    }
}
