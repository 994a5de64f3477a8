package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
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
 * The database under {@link InMemoryDedupStore}: the dedup records and business rows, and the
 * transactions over them, with the semantics of Postgres that the pipeline relies on and
 * {@link DedupStoreContract} checks. A transaction's writes are seen by itself only until it commits;
 * a rollback or a failure drops them. A key a transaction wrote stays its own until it ends: another's
 * write of the key waits for that, and fails as {@link LockNotAvailable} past its transaction's lock
 * wait. After a failed statement the transaction is aborted: its later statements fail, and so does
 * its COMMIT.
 *
 * <p>Business rows ({@link #write}, {@link #insert}) show whose work took effect; a test repository's
 * changes run when their transaction commits ({@link #atCommit}). What other processes do meanwhile,
 * and statements that fail, are {@link StoreFaults}'. The SQL handles it gives run no SQL: any use of
 * them fails, saying why.
 */
final class InMemoryDatabase {

    /** The transaction id of rows that another process wrote. */
    static final long ANOTHER = 0;

    /** A statement of one delivery failed (a constraint, an aborted transaction): the store is fine. */
    static final class StatementFailed extends RuntimeException {
        StatementFailed(String message) { super(message); }
    }

    /** A statement refused for the data it carried (a NUL in a text): the same every time. */
    static final class InvalidData extends RuntimeException {
        InvalidData(String message) { super(message); }
    }

    /** A business row inserted twice: the work's own unique constraint. */
    static final class UniqueViolation extends RuntimeException {
        UniqueViolation(String message) { super(message); }
    }

    /** The store itself failed: refused, cut, restarting. */
    static final class Outage extends RuntimeException {
        Outage(String message) { super(message); }
    }

    /** A statement waited for a lock longer than its transaction's bound. */
    static final class LockNotAvailable extends RuntimeException {
        LockNotAvailable(String message) { super(message); }
    }

    /** A dedup row as stored, with the transaction that inserted it and the last that changed it. */
    record Stored(DedupRecord record, JsonObject payload, String lastError, long writtenIn, long changedIn) {
        Stored change(DedupRecord changed, JsonObject newPayload, String error, long in) {
            return new Stored(changed, newPayload, error, writtenIn, in);
        }
    }

    /** How a transaction ended, for the tests to read. */
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
        final CompletableFuture<Void> ended = new CompletableFuture<>();
        final Duration lockBound;
        RuntimeException aborted;
        Ending ending = Ending.OPEN;

        Tx(long id, Duration lockBound) {
            this.id = id;
            this.lockBound = lockBound;
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
    /** Transactions under their handle, so that a work's watched handle finds its own. */
    private final Map<Object, Tx> byHandle = new IdentityHashMap<>();
    /** The open transaction that wrote each key: a write of the key by another waits for its end. */
    private final Map<String, Tx> holders = new HashMap<>();
    private long lastId;
    private int waiting;
    final StoreFaults faults = new StoreFaults(this);

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
        return statement(tx, List.of(), false, t -> {
            faults.writing(name);
            t.stagedRows.put(name, value);
            return null;
        });
    }

    /** An insert under the work's own unique constraint: fails as Postgres does when the row is there. */
    Uni<Void> insert(SqlConnection tx, String name, String value) {
        return statement(tx, List.of(), false, t -> {
            if (t.stagedRows.containsKey(name) || rows.containsKey(name)) {
                throw new UniqueViolation("duplicate key value violates unique constraint on " + name);
            }
            t.stagedRows.put(name, value);
            return null;
        });
    }

    /**
     * A statement of a test's own repository in {@code tx}: counted as one the work sent, failing as
     * any statement of {@code tx} would, and {@code change} run when the transaction commits, never
     * if it rolls back.
     */
    Uni<Void> atCommit(SqlConnection tx, Runnable change) {
        Objects.requireNonNull(change, "change");
        return statement(tx, List.of(), false, t -> {
            t.atCommit.add(change);
            return null;
        });
    }

    /** Runs {@code body} in a transaction, as {@link DedupStore#transaction} does. */
    <T> Uni<T> transaction(Optional<Duration> lockWait, Function<SqlConnection, Uni<T>> body,
                                  Predicate<T> commit) {
        return Uni.createFrom().deferred(() -> {
            Tx tx;
            CompletableFuture<Void> endGate;
            synchronized (this) {
                if (faults.down()) {
                    return Uni.createFrom().failure(new Outage("connection refused"));
                }
                tx = new Tx(++lastId, lockWait.orElse(null));
                transactions.add(tx);
                byHandle.put(tx.handle.getDelegate(), tx);
                endGate = faults.endGate();
            }
            Uni<T> ran = Uni.createFrom().deferred(() -> body.apply(tx.handle));
            if (endGate != null) {
                ran = ran.onItemOrFailure().call(() -> Uni.createFrom().completionStage(endGate));
            }
            return ran.invoke(result -> end(tx, commit.test(result))).onFailure().invoke(failure -> finish(tx, Ending.FAILED));
        });
    }

    private void end(Tx tx, boolean commit) {
        RuntimeException failed = faults.down() ? new Outage("connection lost at the end of transaction " + tx.id)
                : commit && tx.aborted != null
                ? new StatementFailed("COMMIT of an aborted transaction rolled back: " + tx.aborted.getMessage())
                : null;
        finish(tx, failed != null ? Ending.FAILED : commit ? Ending.COMMITTED : Ending.ROLLED_BACK);
        if (failed != null) {
            throw failed;
        }
    }

    private void finish(Tx tx, Ending ending) {
        synchronized (this) {
            if (tx.ending != Ending.OPEN) {
                return;
            }
            tx.ending = ending;
            holders.values().removeIf(holder -> holder == tx);
            if (ending == Ending.COMMITTED) {
                committed.putAll(tx.staged);
                rows.putAll(tx.stagedRows);
                tx.atCommit.forEach(Runnable::run);
            }
        }
        tx.ended.complete(null);
    }

    // --- internals -----------------------------------------------------------------------------

    /**
     * One statement in the transaction whose handle is {@code on}, run when the Uni is subscribed,
     * on {@code keys}; one that {@code writes} them first waits for the transactions holding them.
     */
    <T> Uni<T> statement(SqlClient on, List<String> keys, boolean writes, Function<Tx, T> body) {
        return Uni.createFrom().deferred(() -> {
            Tx tx;
            synchronized (this) {
                tx = byHandle.get(WatchedConnection.core(on));
                WatchedConnection.count(on);
                if (tx == null) {
                    throw new IllegalArgumentException(on + " is not a connection this store gave a work: pass "
                            + "the connection the work received");
                }
                tx.touched.addAll(keys);
            }
            return afterLocks(tx, writes ? keys : List.of(), body);
        });
    }

    private <T> Uni<T> afterLocks(Tx tx, List<String> keys, Function<Tx, T> body) {
        CompletableFuture<Void> holderEnds;
        synchronized (this) {
            if (tx.ending != Ending.OPEN) {
                throw new IllegalStateException("transaction " + tx.id + " already ended: " + tx.ending);
            }
            if (tx.aborted != null) {
                throw new StatementFailed("current transaction is aborted, commands ignored until end of transaction block");
            }
            if (faults.down()) {
                throw new Outage("connection refused");
            }
            holderEnds = keys.stream().map(key -> faults.lockedByAnother(key) ? StoreFaults.NEVER
                    : holders.getOrDefault(key, tx) != tx ? holders.get(key).ended : null)
                    .filter(Objects::nonNull).findFirst().orElse(null);
            if (holderEnds == StoreFaults.NEVER && tx.lockBound == null) {
                throw new IllegalStateException(keys + ": a key is locked by a transaction that never ends, "
                        + "and this one would wait forever");
            }
            if (holderEnds == null) {
                try {
                    return Uni.createFrom().item(body.apply(tx));
                } catch (RuntimeException failure) {
                    tx.aborted = failure;
                    throw failure;
                }
            }
            waiting++;
        }
        Uni<Void> waited = Uni.createFrom().completionStage(holderEnds.copy()); // a waiter giving up cancels its copy
        if (tx.lockBound != null) {
            waited = waited.ifNoItem().after(tx.lockBound).failWith(() -> abort(tx, new LockNotAvailable(
                    "canceling statement due to lock timeout: " + keys)));
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

    /** A SQL handle that only names a transaction: any use of it fails, saying how a work is tested instead. */
    private static <T> T placeholder(Class<T> type, String name) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) ->
                switch (method.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> name;
                    default -> throw new UnsupportedOperationException("PipelineKit's in-memory database runs no SQL: "
                            + method.getName() + "() was called on the connection of " + name + ", which has no "
                            + "database behind it. Give the work a repository the test can replace: the service's sends "
                            + "its statements through this connection; the test's keeps its rows in memory and hands "
                            + "each change to PipelineKit.Database#write(tx, change), so that the change commits or "
                            + "rolls back with the key's record. To test the SQL itself, run the work against a real "
                            + "database with @QuarkusTest.");
                }));
    }

    /** {@code stored} written in {@code tx}, which holds its key until it ends. */
    Stored stage(Tx tx, String key, Stored stored) {
        tx.staged.put(key, stored);
        holders.put(key, tx);
        return stored;
    }
}
