package dev.idem.pipeline;

import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.sqlclient.PrepareOptions;
import io.vertx.sqlclient.PreparedQuery;
import io.vertx.sqlclient.PreparedStatement;
import io.vertx.sqlclient.Query;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlResult;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.sqlclient.Tuple;
import io.vertx.sqlclient.spi.DatabaseMetadata;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collector;

/**
 * The connection a work is given: the pipeline's transaction's, counting the statements the work
 * sends through it and those that changed rows, so that the pipeline can tell a work that sent
 * nothing here (it wrote through another connection, outside the transaction) and one whose
 * refusal must roll back (it changed rows before refusing).
 * The transaction is the pipeline's: a work that begins, ends or closes it is refused at once.
 */
final class WatchedConnection implements SqlConnection {

    private final SqlConnection delegate;
    private final String scope;
    private final String traceparent;
    private int statements;
    private int changes;

    WatchedConnection(SqlConnection delegate, String scope, String traceparent) {
        this.delegate = delegate;
        this.scope = scope;
        this.traceparent = traceparent;
    }

    /** The connection {@code tx} wraps, for the work of a delivery of {@code scope} in the trace {@code traceparent} (null: none). */
    static io.vertx.mutiny.sqlclient.SqlConnection watch(io.vertx.mutiny.sqlclient.SqlConnection tx, String scope,
                                                         String traceparent) {
        return new io.vertx.mutiny.sqlclient.SqlConnection(new WatchedConnection(tx.getDelegate(), scope, traceparent));
    }

    /** The W3C traceparent of the delivery whose work was given {@code tx}, when it is traced. */
    static java.util.Optional<String> traceparent(io.vertx.mutiny.sqlclient.SqlClient tx) {
        return tx.getDelegate() instanceof WatchedConnection watched
                ? java.util.Optional.ofNullable(watched.traceparent)
                : java.util.Optional.empty();
    }

    /** The statements sent so far, through {@code tx} when {@link #watch} made it, else -1. */
    static int statements(io.vertx.mutiny.sqlclient.SqlClient tx) {
        return tx.getDelegate() instanceof WatchedConnection watched ? watched.statements : -1;
    }

    /** The statements sent through {@code tx} that changed rows, when {@link #watch} made it, else -1. */
    static int changes(io.vertx.mutiny.sqlclient.SqlClient tx) {
        return tx.getDelegate() instanceof WatchedConnection watched ? watched.changes : -1;
    }

    /** The client {@code tx} stands for, under the watch when {@link #watch} made it. */
    static Object core(io.vertx.mutiny.sqlclient.SqlClient tx) {
        return tx.getDelegate() instanceof WatchedConnection watched ? watched.delegate : tx.getDelegate();
    }

    /** One more statement that changed rows, for stores that run a work's writes themselves (the test kit's). */
    static void count(io.vertx.mutiny.sqlclient.SqlClient tx) {
        if (tx.getDelegate() instanceof WatchedConnection watched) {
            watched.statements++;
            watched.changes++;
        }
    }

    @Override
    public Query<RowSet<Row>> query(String sql) {
        statements++;
        return new Watched<>(delegate.query(sql), reads(sql));
    }

    @Override
    public PreparedQuery<RowSet<Row>> preparedQuery(String sql) {
        statements++;
        return new Watched<>(delegate.preparedQuery(sql), reads(sql));
    }

    @Override
    public PreparedQuery<RowSet<Row>> preparedQuery(String sql, PrepareOptions options) {
        statements++;
        return new Watched<>(delegate.preparedQuery(sql, options), reads(sql));
    }

    /** A statement that only reads: a plain SELECT (a WITH may hold an UPDATE, so it counts as a write). */
    private static boolean reads(String sql) {
        int i = 0;
        while (i < sql.length() && (Character.isWhitespace(sql.charAt(i)) || sql.charAt(i) == '(')) {
            i++;
        }
        return sql.regionMatches(true, i, "SELECT", 0, 6) || sql.regionMatches(true, i, "VALUES", 0, 6);
    }

    /** What a statement that writes answered: did it change rows (inserted, updated, deleted)? */
    private void seen(Object result, boolean read) {
        if (!read && result instanceof SqlResult<?> rows) {
            for (SqlResult<?> r = rows; r != null; r = r.next()) {
                if (r.rowCount() > 0) {
                    changes++;
                    return;
                }
            }
        }
    }

    /** A query through which the work's statements go, their answers seen on the way back. */
    private final class Watched<T> implements PreparedQuery<T> {
        private final Query<T> query;
        private final boolean read;

        Watched(Query<T> query, boolean read) {
            this.query = query;
            this.read = read;
        }

        private PreparedQuery<T> prepared() {
            return (PreparedQuery<T>) query;
        }

        private Handler<AsyncResult<T>> seeing(Handler<AsyncResult<T>> handler) {
            return answer -> {
                if (answer.succeeded()) {
                    seen(answer.result(), read);
                }
                handler.handle(answer);
            };
        }

        @Override
        public void execute(Handler<AsyncResult<T>> handler) {
            query.execute(seeing(handler));
        }

        @Override
        public Future<T> execute() {
            return query.execute().onSuccess(result -> seen(result, read));
        }

        @Override
        public void execute(Tuple tuple, Handler<AsyncResult<T>> handler) {
            prepared().execute(tuple, seeing(handler));
        }

        @Override
        public Future<T> execute(Tuple tuple) {
            return prepared().execute(tuple).onSuccess(result -> seen(result, read));
        }

        @Override
        public void executeBatch(List<Tuple> batch, Handler<AsyncResult<T>> handler) {
            prepared().executeBatch(batch, seeing(handler));
        }

        @Override
        public Future<T> executeBatch(List<Tuple> batch) {
            return prepared().executeBatch(batch).onSuccess(result -> seen(result, read));
        }

        @Override
        public <R> PreparedQuery<SqlResult<R>> collecting(Collector<Row, ?, R> collector) {
            return new Watched<>(query instanceof PreparedQuery<T> p ? p.collecting(collector) : query.collecting(collector), read);
        }

        @Override
        public <U> PreparedQuery<RowSet<U>> mapping(Function<Row, U> mapper) {
            return new Watched<>(query instanceof PreparedQuery<T> p ? p.mapping(mapper) : query.mapping(mapper), read);
        }
    }

    @Override
    public SqlConnection prepare(String sql, Handler<AsyncResult<PreparedStatement>> handler) {
        statements++;
        delegate.prepare(sql, handler);
        return this;
    }

    @Override
    public Future<PreparedStatement> prepare(String sql) {
        statements++;
        return delegate.prepare(sql);
    }

    @Override
    public SqlConnection prepare(String sql, PrepareOptions options, Handler<AsyncResult<PreparedStatement>> handler) {
        statements++;
        delegate.prepare(sql, options, handler);
        return this;
    }

    @Override
    public Future<PreparedStatement> prepare(String sql, PrepareOptions options) {
        statements++;
        return delegate.prepare(sql, options);
    }

    @Override
    public Transaction transaction() {
        return delegate.transaction();
    }

    @Override
    public boolean isSSL() {
        return delegate.isSSL();
    }

    @Override
    public DatabaseMetadata databaseMetadata() {
        return delegate.databaseMetadata();
    }

    @Override
    public SqlConnection exceptionHandler(Handler<Throwable> handler) {
        throw owned("set an exception handler on");
    }

    @Override
    public SqlConnection closeHandler(Handler<Void> handler) {
        throw owned("set a close handler on");
    }

    @Override
    public void begin(Handler<AsyncResult<Transaction>> handler) {
        throw owned("begin a transaction on");
    }

    @Override
    public Future<Transaction> begin() {
        throw owned("begin a transaction on");
    }

    @Override
    public void close(Handler<AsyncResult<Void>> handler) {
        throw owned("close");
    }

    @Override
    public Future<Void> close() {
        throw owned("close");
    }

    private IllegalStateException owned(String what) {
        return new IllegalStateException("The work of scope " + scope + " tried to " + what + " the connection it "
                + "was given: that connection and its transaction belong to the idempotency pipeline, which commits "
                + "the work together with the key's record. Send the work's statements through it and return.");
    }
}
