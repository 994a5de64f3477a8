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
import java.util.IdentityHashMap;
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

/**
 * A {@link DedupStore} in memory with the transaction semantics the pipeline relies on: what a
 * transaction writes is staged and seen by itself only, and becomes visible when it commits; a
 * rollback or a failure drops it. A record insert meeting a committed row for its key writes
 * nothing, as {@code ON CONFLICT DO NOTHING} does. After a failed statement the transaction is
 * aborted: every later statement of it fails, and so does its COMMIT, as in Postgres.
 *
 * <p>Besides the dedup records it keeps business rows ({@link #write}) so that tests can see whose
 * work took effect, and runs the changes of a test's own repository when their transaction commits
 * ({@link #atCommit}). Hooks stand in for what other processes do meanwhile: a concurrent winner, a
 * lock held past the bound, a takeover first, an outage; and for a statement that fails.
 *
 * <p>Every operation answers synchronously at subscription; the SQL handles are placeholders that
 * fail, saying why, if anything but this store uses them: it runs no SQL.
 */
final class InMemoryDedupStore implements DedupStore {

    /** The transaction id of rows that another process wrote. */
    static final long ANOTHER = 0;

    /** A statement of one delivery failed (a constraint, bad data): the store itself is fine. */
    static final class StatementFailed extends RuntimeException {
        StatementFailed(String message) {
            super(message);
        }
    }

    /** A statement refused for the data it carried (a NUL in a text): the same every time. */
    static final class InvalidData extends RuntimeException {
        InvalidData(String message) {
            super(message);
        }
    }

    /** A business row inserted twice: the work's own unique constraint. */
    static final class UniqueViolation extends RuntimeException {
        UniqueViolation(String message) {
            super(message);
        }
    }

    /** The store itself failed: refused, cut, restarting. */
    static final class Outage extends RuntimeException {
        Outage(String message) {
            super(message);
        }
    }

    /** A statement waited for a lock longer than its transaction's bound. */
    static final class LockNotAvailable extends RuntimeException {
        LockNotAvailable(String message) {
            super(message);
        }
    }

    /** A dedup row as stored, with the pipeline transaction that inserted it and the last that changed it. */
    record Stored(DedupRecord record, JsonObject payload, String lastError, long writtenIn, long changedIn) {
        Stored change(DedupRecord changed, JsonObject newPayload, String error, long in) {
            return new Stored(changed, newPayload, error, writtenIn, in);
        }
    }

    /** What one transaction did, for the tests to read. */
    enum Ending { OPEN, COMMITTED, ROLLED_BACK, FAILED }

    final class Tx {
        final long id;
        final SqlConnection handle;
        final Map<String, Stored> staged = new LinkedHashMap<>();
        final Map<String, String> stagedRows = new LinkedHashMap<>();
        /** The changes of a test's repository, run in this order if the transaction commits. */
        final List<Runnable> atCommit = new ArrayList<>();
        /** The dedup keys it looked up or wrote, in that order. */
        final Set<String> touched = new LinkedHashSet<>();
        Duration lockBound;
        RuntimeException aborted;
        Ending ending = Ending.OPEN;

        Tx(long id) {
            this.id = id;
            this.handle = new SqlConnection(placeholder(io.vertx.sqlclient.SqlConnection.class, "transaction " + id));
        }

        Optional<Stored> visible(String key) {
            Stored own = staged.get(key);
            return own != null ? Optional.of(own) : Optional.ofNullable(committed.get(key));
        }
    }

    private final Map<String, Stored> committed = new LinkedHashMap<>();
    private final Map<String, String> rows = new LinkedHashMap<>();
    private final List<Tx> transactions = new ArrayList<>();
    /** Transactions by the client under their handle, so that a work's watched handle finds its own. */
    private final Map<Object, Tx> byHandle = new IdentityHashMap<>();
    private long lastId;

    // hooks
    private final Map<String, DedupRecord> winners = new HashMap<>();
    private final Map<String, Integer> vanishing = new HashMap<>();
    private final Set<String> locked = new HashSet<>();
    private final Set<String> failingRows = new HashSet<>();
    private final Set<String> refusedRows = new HashSet<>();
    private final Set<String> racedTakeOvers = new HashSet<>();
    private boolean down;
    private boolean downOnRecord;
    private CompletableFuture<Void> nextEndGate;

    // --- hooks ---------------------------------------------------------------------------------

    /**
     * Another delivery commits {@code record} while a transaction of the pipeline runs: right
     * before that transaction inserts the key (its record or its claim).
     */
    synchronized void commitsMeanwhile(DedupRecord record) {
        winners.put(DedupStore.batchKey(record.scope(), record.key()), record);
    }

    /**
     * The next {@code times} inserts of the key (records or claims) meet a row that is gone when
     * looked up (committed by another delivery, then archived).
     */
    synchronized void vanishesMeanwhile(String scope, String key, int times) {
        vanishing.put(DedupStore.batchKey(scope, key), times);
    }

    /** Another transaction holds the key and does not finish: an insert of it waits. */
    synchronized void lockedByAnother(String scope, String key) {
        locked.add(DedupStore.batchKey(scope, key));
    }

    /** Every write of the business row {@code name} fails, as a statement of one delivery. */
    synchronized void failWritesOf(String name) {
        failingRows.add(name);
    }

    /** The business statement writing {@code name} is refused for its data, every time. */
    synchronized void refuseDataOf(String name) {
        refusedRows.add(name);
    }

    /** Another process takes over the key's hanging record right before the next takeover of it. */
    synchronized void takenOverFirstByAnother(String scope, String key) {
        racedTakeOvers.add(DedupStore.batchKey(scope, key));
    }

    /** The store refuses every connection and statement from now on. */
    synchronized void goDown() {
        down = true;
    }

    /** The store is back, with what had committed before it went down. */
    synchronized void comeBack() {
        down = false;
        downOnRecord = false;
    }

    /** The next record insert finds the store gone, and it stays down. */
    synchronized void goDownOnRecord() {
        downOnRecord = true;
    }

    /** The next transaction holds its end (commit or rollback) until the answer is completed. */
    synchronized CompletableFuture<Void> holdNextEnd() {
        nextEndGate = new CompletableFuture<>();
        return nextEndGate;
    }

    // --- what tests read and seed --------------------------------------------------------------

    synchronized Optional<Stored> committed(String scope, String key) {
        return Optional.ofNullable(committed.get(DedupStore.batchKey(scope, key)));
    }

    synchronized Optional<Stored> committed(IdemRequest request) {
        return committed(request.scope(), request.key());
    }

    synchronized Map<String, Stored> committedRecords() {
        return new LinkedHashMap<>(committed);
    }

    /** The committed business rows. */
    synchronized Map<String, String> rows() {
        return new LinkedHashMap<>(rows);
    }

    /** The transactions run through {@link #transaction}, in the order they began. */
    synchronized List<Tx> transactions() {
        return new ArrayList<>(transactions);
    }

    synchronized int transactionsRun() {
        return transactions.size();
    }

    /** A record another process committed earlier. */
    synchronized void seed(DedupRecord record, JsonObject payload) {
        committed.put(DedupStore.batchKey(record.scope(), record.key()), new Stored(record, payload, null, ANOTHER, ANOTHER));
    }

    /** The business statement of a test's work: {@code name} set to {@code value} in {@code tx}. */
    Uni<Void> write(SqlConnection tx, String name, String value) {
        return statement(tx, t -> {
            if (failingRows.contains(name)) {
                throw new StatementFailed("cannot write " + name);
            }
            if (refusedRows.contains(name)) {
                throw new InvalidData("invalid byte sequence in " + name);
            }
            t.stagedRows.put(name, value);
            return null;
        });
    }

    /**
     * A business statement under a unique constraint of the work's own table: inserts {@code name}
     * in {@code tx}, or fails as Postgres does when the row is there, committed or written by this
     * transaction.
     */
    Uni<Void> insert(SqlConnection tx, String name, String value) {
        return statement(tx, t -> {
            if (t.stagedRows.containsKey(name) || rows.containsKey(name)) {
                throw new UniqueViolation("duplicate key value violates unique constraint on " + name);
            }
            t.stagedRows.put(name, value);
            return null;
        });
    }

    /**
     * A statement of a test's own repository in {@code tx}: counted as one the work sent through
     * its connection, failing as any statement of {@code tx} would (the store down, the transaction
     * aborted), and {@code change} run when the transaction commits, never if it rolls back.
     */
    Uni<Void> atCommit(SqlConnection tx, Runnable change) {
        Objects.requireNonNull(change, "change");
        return statement(tx, t -> {
            t.atCommit.add(change);
            return null;
        });
    }

    // --- DedupStore ----------------------------------------------------------------------------

    @Override
    public <T> Uni<T> transaction(Optional<Duration> lockWait, Function<SqlConnection, Uni<T>> body,
                                  Predicate<T> commit) {
        return Uni.createFrom().deferred(() -> {
            Tx tx;
            CompletableFuture<Void> gate;
            synchronized (this) {
                if (down) {
                    return Uni.createFrom().failure(new Outage("connection refused"));
                }
                tx = new Tx(++lastId);
                tx.lockBound = lockWait.orElse(null);
                transactions.add(tx);
                byHandle.put(tx.handle.getDelegate(), tx);
                gate = nextEndGate;
                nextEndGate = null;
            }
            Uni<T> ran = Uni.createFrom().deferred(() -> body.apply(tx.handle));
            if (gate != null) {
                ran = ran.onItemOrFailure().call(() -> Uni.createFrom().completionStage(gate));
            }
            return ran.map(result -> {
                end(tx, commit.test(result));
                return result;
            }).onFailure().invoke(failure -> {
                synchronized (this) {
                    if (tx.ending == Ending.OPEN) {
                        tx.ending = Ending.FAILED;
                    }
                }
            });
        });
    }

    private synchronized void end(Tx tx, boolean commit) {
        if (down) {
            tx.ending = Ending.FAILED;
            throw new Outage("connection lost at the end of transaction " + tx.id);
        }
        if (commit && tx.aborted != null) {
            tx.ending = Ending.FAILED;
            throw new StatementFailed("COMMIT of an aborted transaction rolled back: " + tx.aborted.getMessage());
        }
        if (commit) {
            committed.putAll(tx.staged);
            rows.putAll(tx.stagedRows);
            tx.ending = Ending.COMMITTED;
            tx.atCommit.forEach(Runnable::run);
        } else {
            tx.ending = Ending.ROLLED_BACK;
        }
    }

    @Override
    public Uni<Claim> claim(SqlConnection tx, IdemRequest request, Instant now, Instant leaseUntil, Instant expiresAt,
                            JsonObject payload) {
        String key = DedupStore.batchKey(request);
        return statement(tx, t -> {
            t.touched.add(key);
            if (locked.contains(key)) {
                if (t.lockBound == null) {
                    throw new IllegalStateException(key + " is locked by a transaction that never ends: this would wait forever");
                }
                return Claim.LOCKED;
            }
            othersCommit(key);
            if (vanishes(key) || t.visible(key).isPresent()) {
                return Claim.EXISTS;
            }
            DedupRecord record = new DedupRecord(request.scope(), request.key(), request.fingerprint(),
                    DedupRecord.Status.PROCESSING, null, 1, leaseUntil, now, now, expiresAt);
            t.staged.put(key, new Stored(checked(record), payload, null, t.id, t.id));
            return Claim.WON;
        });
    }

    @Override
    public Uni<Set<String>> recordAll(SqlConnection tx, List<IdemRequest> requests, List<String> results, Instant now,
                                      List<Instant> expiresAt) {
        return statement(tx, t -> {
            if (downOnRecord) {
                downOnRecord = false;
                down = true;
                throw new Outage("connection reset while writing the records");
            }
            if (t.lockBound == null && requests.stream().anyMatch(r -> locked.contains(DedupStore.batchKey(r)))) {
                throw new IllegalStateException("a key is locked by a transaction that never ends: this would wait forever");
            }
            Set<String> seen = new HashSet<>();
            Set<String> written = new HashSet<>();
            for (int i = 0; i < requests.size(); i++) {
                IdemRequest request = requests.get(i);
                String key = DedupStore.batchKey(request);
                if (!seen.add(key)) {
                    throw new StatementFailed("ON CONFLICT DO NOTHING met the same key twice in one statement: " + key);
                }
                t.touched.add(key);
                if (locked.contains(key)) {
                    throw new LockNotAvailable("canceling statement due to lock timeout: " + key);
                }
                othersCommit(key);
                if (vanishes(key) || t.visible(key).isPresent()) {
                    continue;
                }
                DedupRecord record = new DedupRecord(request.scope(), request.key(), request.fingerprint(),
                        DedupRecord.Status.DONE, JsonText.decode(results.get(i)), 1, null, now, now, expiresAt.get(i));
                t.staged.put(key, new Stored(checked(record), null, null, t.id, t.id));
                written.add(key);
            }
            return written;
        });
    }

    @Override
    public Uni<Map<String, DedupRecord>> findAll(SqlClient on, List<IdemRequest> requests) {
        return statement(on, t -> {
            Map<String, DedupRecord> found = new HashMap<>();
            for (IdemRequest request : requests) {
                String key = DedupStore.batchKey(request);
                t.touched.add(key);
                t.visible(key).ifPresent(stored -> found.put(key, stored.record()));
            }
            return found;
        });
    }

    @Override
    public Uni<Optional<Lease>> takeOver(SqlClient on, Lease seen, Instant until, Instant now) {
        IdemRequest request = seen.request();
        String key = DedupStore.batchKey(request);
        return statement(on, t -> {
            if (racedTakeOvers.remove(key)) {
                Stored other = committed.get(key);
                DedupRecord r = other.record();
                committed.put(key, other.change(new DedupRecord(r.scope(), r.key(), r.fingerprint(), r.status(), r.result(),
                        r.attempts() + 1, now.plus(Duration.ofMinutes(1)), r.createdAt(), now, r.expiresAt()),
                        other.payload(), other.lastError(), ANOTHER));
            }
            Optional<Stored> current = t.visible(key);
            if (current.isEmpty()) {
                return Optional.empty();
            }
            DedupRecord r = current.get().record();
            if (r.status() != DedupRecord.Status.PROCESSING || !r.leaseUntil().equals(seen.until())
                    || !r.leaseUntil().isBefore(now)) {
                return Optional.empty();
            }
            DedupRecord taken = new DedupRecord(r.scope(), r.key(), r.fingerprint(), r.status(), r.result(),
                    r.attempts() + 1, until, r.createdAt(), now, r.expiresAt());
            t.staged.put(key, current.get().change(checked(taken), current.get().payload(), current.get().lastError(), t.id));
            return Optional.of(new Lease(request, current.get().payload(), until, taken.attempts()));
        });
    }

    @Override
    public Uni<Boolean> confirm(SqlConnection tx, Lease held, JsonObject result, Instant now) {
        String key = DedupStore.batchKey(held.request());
        return statement(tx, t -> {
            Optional<Stored> current = holding(t, key, held);
            if (current.isEmpty()) {
                return false;
            }
            DedupRecord r = current.get().record();
            DedupRecord done = new DedupRecord(r.scope(), r.key(), r.fingerprint(), DedupRecord.Status.DONE, result,
                    r.attempts(), null, r.createdAt(), now, r.expiresAt());
            t.staged.put(key, current.get().change(checked(done), null, current.get().lastError(), t.id));
            return true;
        });
    }

    @Override
    public Uni<Boolean> release(SqlClient on, Lease held, Instant retryAt, String error, Instant now) {
        String key = DedupStore.batchKey(held.request());
        return statement(on, t -> {
            Optional<Stored> current = holding(t, key, held);
            if (current.isEmpty()) {
                return false;
            }
            DedupRecord r = current.get().record();
            DedupRecord released = new DedupRecord(r.scope(), r.key(), r.fingerprint(),
                    retryAt == null ? DedupRecord.Status.FAILED : DedupRecord.Status.PROCESSING, r.result(),
                    r.attempts(), retryAt, r.createdAt(), now, r.expiresAt());
            t.staged.put(key, current.get().change(checked(released), current.get().payload(), error, t.id));
            return true;
        });
    }

    @Override
    public Failure classify(Throwable failure) {
        return failure instanceof InvalidData ? Failure.INVALID_DATA
                : failure instanceof LockNotAvailable ? Failure.LOCK_NOT_AVAILABLE
                : failure instanceof UniqueViolation ? Failure.UNIQUE_VIOLATION
                : failure instanceof Outage ? Failure.UNAVAILABLE
                : Failure.OTHER;
    }

    // --- internals -----------------------------------------------------------------------------

    /**
     * One statement in the transaction whose handle is {@code on}, run when the Uni is subscribed:
     * every statement of the protocols runs in one of {@link #transaction}'s.
     */
    private <T> Uni<T> statement(SqlClient on, Function<Tx, T> body) {
        return Uni.createFrom().deferred(() -> {
            synchronized (this) {
                Tx tx = byHandle.get(WatchedConnection.core(on));
                WatchedConnection.count(on);
                if (tx == null) {
                    throw new IllegalArgumentException(on + " is not a connection this store gave a work: pass "
                            + "the connection the work received");
                }
                if (tx.ending != Ending.OPEN) {
                    throw new IllegalStateException("transaction " + tx.id + " already ended: " + tx.ending);
                }
                if (tx.aborted != null) {
                    throw new StatementFailed("current transaction is aborted, commands ignored until end of "
                            + "transaction block");
                }
                if (down) {
                    throw new Outage("connection refused");
                }
                try {
                    return Uni.createFrom().item(body.apply(tx));
                } catch (RuntimeException failure) {
                    tx.aborted = failure;
                    throw failure;
                }
            }
        });
    }

    /** The winner commits its row for {@code key}, now, if one is waiting to. */
    private void othersCommit(String key) {
        DedupRecord winner = winners.remove(key);
        if (winner != null) {
            committed.put(key, new Stored(winner, null, null, ANOTHER, ANOTHER));
        }
    }

    /** Whether this insert of {@code key} meets a row that is gone by the time it is looked up. */
    private boolean vanishes(String key) {
        Integer times = vanishing.remove(key);
        if (times != null && times > 1) {
            vanishing.put(key, times - 1);
        }
        return times != null;
    }

    /** The record while {@code held} still is its hold: the compare-and-set of every write after a claim. */
    private Optional<Stored> holding(Tx tx, String key, Lease held) {
        return tx.visible(key).filter(s -> s.record().status() == DedupRecord.Status.PROCESSING
                && s.record().attempts() == held.attempt()
                && s.record().leaseUntil().equals(held.until()));
    }

    /** The table's CHECK constraints. */
    private static DedupRecord checked(DedupRecord record) {
        if (record.status() == DedupRecord.Status.DONE && record.result() == null) {
            throw new StatementFailed("violates dedup_record_done_has_result");
        }
        if (record.status() == DedupRecord.Status.PROCESSING && record.leaseUntil() == null) {
            throw new StatementFailed("violates dedup_record_processing_has_lease");
        }
        return record;
    }

    /**
     * A SQL handle that only identifies a transaction: any use of it fails, saying that no database
     * is behind it and how a work is tested instead.
     */
    private static <T> T placeholder(Class<T> type, String name) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) ->
                switch (method.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> name;
                    default -> throw new UnsupportedOperationException(noSql(name, method.getName()));
                }));
    }

    private static String noSql(String connection, String method) {
        return "PipelineKit's in-memory database runs no SQL: " + method + "() was called on the connection of "
                + connection + ", which has no database behind it. Give the work a repository the test can replace: "
                + "the service's sends its statements through this connection; the test's keeps its rows in memory "
                + "and hands each change to PipelineKit.Database#write(tx, change), so that the change commits or "
                + "rolls back with the key's record. To test the SQL itself, run the work against a real database "
                + "with @QuarkusTest.";
    }
}
