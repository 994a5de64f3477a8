package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.pgclient.PgException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The database {@link InMemoryDedupStore} runs on, whose transactions behave as Postgres's: writes are a
 * transaction's own until it commits; a key it wrote makes another's write wait until it ends (or its
 * lock wait is over); after a failed statement the rest fail, each failure a {@link PgException} with
 * Postgres's SQLSTATE. Business rows show whose work took effect; what other processes do meanwhile is
 * {@link StoreFaults}'. Its SQL handles run no SQL.
 */
final class InMemoryDatabase {

    /** The transaction id of rows that another process wrote. */
    static final long ANOTHER = 0;

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
        final Duration lockWait;
        RuntimeException aborted;
        Ending ending = Ending.OPEN;

        Tx(Duration lockWait) {
            this.lockWait = lockWait;
        }

        Optional<Stored> visible(String key) {
            return Optional.ofNullable(staged.getOrDefault(key, committed.get(key)));
        }

        /** Writes {@code stored}, unless its text holds a NUL, which Postgres's UTF-8 refuses. */
        Stored stage(String key, Stored stored) {
            DedupRecord r = stored.record();
            if ((r.scope() + r.key() + r.fingerprint() + stored.lastError()).indexOf('\0') >= 0
                    || (String.valueOf(r.result()) + stored.payload()).contains("\\u0000")) {
                throw failure("22021", "invalid byte sequence for encoding \"UTF8\": 0x00");
            }
            staged.put(key, stored);
            return stored;
        }
    }

    final StoreFaults faults = new StoreFaults(this);
    private final Map<String, Stored> committed = new LinkedHashMap<>();
    private final Map<String, String> rows = new LinkedHashMap<>();
    private final List<Tx> transactions = new ArrayList<>();
    private int waiting;

    /** A failure as Postgres reports it, {@code state} its SQLSTATE ({@link PgDedupStore#classify} reads it). */
    static PgException failure(String state, String message) {
        return new PgException(message, "ERROR", state, null);
    }

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
                throw failure("23505", "duplicate key value violates unique constraint on " + name);
            }
            return t.atCommit.put(name, () -> rows.put(name, value));
        }).replaceWithVoid();
    }

    /** A statement of a test's repository in {@code tx}, failing as any would: {@code change} runs if it commits. */
    Uni<Void> atCommit(SqlConnection tx, Runnable change) {
        return statement(tx, List.of(), false, t -> t.atCommit.put(new Object(), change)).replaceWithVoid();
    }

    <T> Uni<T> transaction(Optional<Duration> lockWait, Function<SqlConnection, Uni<T>> body,
                           Function<T, DedupStore.Ending> ending) {
        return Uni.createFrom().deferred(() -> {
            Tx tx;
            synchronized (this) {
                unlessDown("connection refused");
                transactions.add(tx = new Tx(lockWait.orElse(null)));
            }
            return Uni.createFrom().deferred(() -> body.apply(tx.handle))
                    .onItemOrFailure().call(() -> Uni.createFrom().completionStage(tx.endGate))
                    .invoke(result -> {
                        switch (ending.apply(result)) {
                            case COMMIT -> end(tx, Ending.COMMITTED);
                            case ROLLBACK -> end(tx, Ending.ROLLED_BACK);
                            case ENDED -> {
                                if (tx.ending == Ending.OPEN) {
                                    throw new IllegalStateException("the body said it ended transaction " + tx.id
                                            + ", which is open");
                                }
                            }
                        }
                    })
                    .onFailure().invoke(f -> end(tx, Ending.FAILED));
        });
    }

    /** A COMMIT statement on {@code on}'s transaction: as Postgres's, it rolls back a transaction a statement aborted. */
    Uni<Void> commit(SqlConnection on) {
        return Uni.createFrom().deferred(() -> {
            Tx tx = transactionOf(on);
            return Uni.createFrom().completionStage(tx.endGate)
                    .invoke(() -> end(tx, tx.aborted == null ? Ending.COMMITTED : Ending.ROLLED_BACK));
        });
    }

    /** Ends {@code tx} as {@code ending} unless it ended: a COMMIT or ROLLBACK that fails leaves it to end FAILED. */
    private void end(Tx tx, Ending ending) {
        synchronized (this) {
            if (tx.ending != Ending.OPEN) {
                return;
            }
            if (ending != Ending.FAILED) {
                unlessDown("connection lost at the end of transaction " + tx.id);
            }
            if (ending == Ending.COMMITTED && tx.aborted != null) {
                throw failure("25P02", "COMMIT of an aborted transaction rolled back: " + tx.aborted.getMessage());
            }
            tx.ending = ending;
            if (ending == Ending.COMMITTED) {
                committed.putAll(tx.staged);
                tx.atCommit.values().forEach(Runnable::run);
            }
        }
        tx.ended.complete(null);
    }

    private void unlessDown(String what) {
        if (faults.down()) {
            throw failure("08006", what);
        }
    }

    /** A statement of {@code on}'s transaction on {@code keys}; one that {@code writes} them waits for their holders. */
    <T> Uni<T> statement(SqlClient on, List<String> keys, boolean writes, Function<Tx, T> body) {
        return Uni.createFrom().deferred(() -> {
            Tx tx;
            synchronized (this) {
                WatchedConnection.count(on);
                tx = transactionOf(on);
                tx.touched.addAll(keys);
            }
            return afterLocks(tx, writes ? keys : List.of(), body);
        });
    }

    private synchronized Tx transactionOf(SqlClient on) {
        Object core = WatchedConnection.core(on);
        return transactions.stream().filter(t -> t.handle.getDelegate() == core).findFirst().orElseThrow(() ->
                new IllegalArgumentException(on + " is not a connection this store gave: pass the work's own"));
    }

    /** Runs {@code body} once no other open transaction wrote one of {@code keys}; its failure aborts {@code tx}. */
    private <T> Uni<T> afterLocks(Tx tx, List<String> keys, Function<Tx, T> body) {
        CompletableFuture<Void> holderEnds;
        synchronized (this) {
            if (tx.ending != Ending.OPEN || tx.aborted != null) {
                throw failure("25P02", tx.ending != Ending.OPEN ? "transaction " + tx.id + " already ended"
                        : "current transaction is aborted, commands ignored until end of transaction block");
            }
            unlessDown("connection refused");
            holderEnds = keys.stream().map(key -> faults.lockedByAnother(key) ? StoreFaults.NEVER
                    : transactions.stream().filter(o -> o != tx && o.ending == Ending.OPEN && o.staged.containsKey(key))
                    .map(o -> o.ended).findFirst().orElse(null)).filter(Objects::nonNull).findFirst().orElse(null);
            if (holderEnds == null) {
                try {
                    return Uni.createFrom().item(body.apply(tx));
                } catch (RuntimeException failure) {
                    throw tx.aborted = failure;
                }
            }
            waiting++;
        }
        Uni<Void> waited = Uni.createFrom().completionStage(holderEnds.copy()); // a waiter giving up cancels its copy
        if (tx.lockWait != null) {
            waited = waited.ifNoItem().after(tx.lockWait).failWith(() -> {
                synchronized (this) {
                    return tx.aborted = failure("55P03", "canceling statement due to lock timeout: " + keys);
                }
            });
        }
        return waited.onTermination().invoke(() -> {
            synchronized (this) {
                waiting--;
            }
        }).chain(() -> afterLocks(tx, keys, body));
    }

    /**
     * A SQL handle that only names a transaction. A prepared statement on it (a known work's
     * {@link Statement}) sets the row its text names to its first argument; any other use fails,
     * saying how a work is tested instead.
     */
    private io.vertx.sqlclient.SqlConnection placeholder(String name) {
        Class<?> type = io.vertx.sqlclient.SqlConnection.class;
        return (io.vertx.sqlclient.SqlConnection) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (proxy, method, args) -> switch (method.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> name;
                    case "preparedQuery" -> namedRow(proxy, (String) args[0]);
                    default -> throw noSql(method.getName(), name);
                });
    }

    private Object namedRow(Object core, String row) {
        Class<?> type = io.vertx.sqlclient.PreparedQuery.class;
        return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            if (method.getName().equals("execute") && args != null && args.length == 2
                    && args[0] instanceof io.vertx.sqlclient.Tuple tuple && args[1] instanceof Handler<?> handler) {
                @SuppressWarnings("unchecked")
                Handler<AsyncResult<Object>> answer = (Handler<AsyncResult<Object>>) handler;
                SqlConnection on;
                synchronized (this) {
                    on = transactions.stream().filter(t -> t.handle.getDelegate() == core).findFirst().orElseThrow().handle;
                }
                row(on, row, String.valueOf(tuple.getValue(0)), false).subscribe().with(
                        ok -> answer.handle(Future.succeededFuture()), failed -> answer.handle(Future.failedFuture(failed)));
                return null;
            }
            return switch (method.getName()) {
                case "equals" -> proxy == args[0];
                case "hashCode" -> System.identityHashCode(proxy);
                case "toString" -> row;
                default -> throw noSql(method.getName(), row);
            };
        });
    }

    private static UnsupportedOperationException noSql(String method, String on) {
        return new UnsupportedOperationException("PipelineKit's in-memory database runs no SQL (" + method + "() on "
                + on + "): hand changes to PipelineKit.Database#write; test SQL with @QuarkusTest.");
    }
}
