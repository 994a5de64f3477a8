package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.List;
import java.util.Objects;

/**
 * A statement and its arguments, not yet sent: what a change whose effect is known ahead is made
 * of ({@link Work#applying}, {@code KnownAnswer}). The pipeline sends such statements all at once,
 * then the key's record and the COMMIT right behind them, without waiting for their answers. So
 * they are given as statements, not as a Uni: a statement that waited for another's answer would
 * go out after the COMMIT, outside the transaction.
 */
public record Statement(String sql, Tuple arguments) {

    public Statement {
        Objects.requireNonNull(sql, "sql");
        Objects.requireNonNull(arguments, "arguments");
    }

    public static Statement of(String sql, Tuple arguments) {
        return new Statement(sql, arguments);
    }

    /** Sends it through {@code client}: a transaction's connection, or a pool for a statement of its own. */
    public Uni<RowSet<Row>> on(SqlClient client) {
        return client.preparedQuery(sql).execute(arguments);
    }

    /** Sends every one of {@code statements} on {@code tx} at once, pipelined; fails as the first that failed. */
    public static Uni<Void> allOn(SqlConnection tx, List<Statement> statements) {
        return statements.isEmpty() ? Uni.createFrom().voidItem()
                : Uni.join().all(statements.stream().map(statement -> statement.on(tx)).toList()).andFailFast().replaceWithVoid();
    }
}
