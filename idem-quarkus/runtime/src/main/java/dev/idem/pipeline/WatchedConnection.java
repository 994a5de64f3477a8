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
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.sqlclient.spi.DatabaseMetadata;

/**
 * The connection a work is given: the pipeline's transaction's, counting the statements the work
 * sends through it, so that the pipeline can tell a work that changed nothing here (it wrote
 * through another connection, outside the transaction) and one whose refusal must roll back.
 * The transaction is the pipeline's: a work that begins, ends or closes it is refused at once.
 */
final class WatchedConnection implements SqlConnection {

    private final SqlConnection delegate;
    private final String scope;
    private int statements;

    WatchedConnection(SqlConnection delegate, String scope) {
        this.delegate = delegate;
        this.scope = scope;
    }

    /** The connection {@code tx} wraps, for the work of a delivery of {@code scope}. */
    static io.vertx.mutiny.sqlclient.SqlConnection watch(io.vertx.mutiny.sqlclient.SqlConnection tx, String scope) {
        return new io.vertx.mutiny.sqlclient.SqlConnection(new WatchedConnection(tx.getDelegate(), scope));
    }

    /** The statements sent so far, through {@code tx} when {@link #watch} made it, else -1. */
    static int statements(io.vertx.mutiny.sqlclient.SqlClient tx) {
        return tx.getDelegate() instanceof WatchedConnection watched ? watched.statements : -1;
    }

    /** The client {@code tx} stands for, under the watch when {@link #watch} made it. */
    static Object core(io.vertx.mutiny.sqlclient.SqlClient tx) {
        return tx.getDelegate() instanceof WatchedConnection watched ? watched.delegate : tx.getDelegate();
    }

    /** One more statement, for stores that run a work's statements themselves (the unit tests'). */
    static void count(io.vertx.mutiny.sqlclient.SqlClient tx) {
        if (tx.getDelegate() instanceof WatchedConnection watched) {
            watched.statements++;
        }
    }

    @Override
    public Query<RowSet<Row>> query(String sql) {
        statements++;
        return delegate.query(sql);
    }

    @Override
    public PreparedQuery<RowSet<Row>> preparedQuery(String sql) {
        statements++;
        return delegate.preparedQuery(sql);
    }

    @Override
    public PreparedQuery<RowSet<Row>> preparedQuery(String sql, PrepareOptions options) {
        statements++;
        return delegate.preparedQuery(sql, options);
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
