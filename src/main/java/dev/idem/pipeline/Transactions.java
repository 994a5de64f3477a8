package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Transaction;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Predicate;

/** The pipeline's transactions, single or batched: one connection, committed or rolled back by what they decided. */
final class Transactions {

    private Transactions() {}

    /**
     * Runs {@code body} in a transaction and commits when {@code commit} says so. The body's first
     * statement is sent right behind BEGIN, without waiting for BEGIN's answer: the client
     * pipelines both on the connection, which saves one round trip.
     */
    static <T> Uni<T> run(Pool pool, Function<SqlConnection, Uni<T>> body, Predicate<T> commit) {
        return pool.withConnection(conn -> Uni.combine().all().unis(conn.begin(), body.apply(conn)).asTuple()
                .call(begun -> commit.test(begun.getItem2()) ? begun.getItem1().commit() : begun.getItem1().rollback())
                .map(begun -> begun.getItem2())
                .onFailure().call(() -> rollbackQuietly(conn.transaction())));
    }

    /**
     * Bounds every lock wait of the transaction to {@code wait}: past it the statement fails with
     * {@code lock_not_available} (55P03), which callers answer as IN_FLIGHT.
     */
    static Uni<Void> boundLockWaits(SqlConnection tx, Duration wait) {
        return tx.query("SET LOCAL lock_timeout = '" + Math.max(1, wait.toMillis()) + "ms'").execute().replaceWithVoid();
    }

    /** {@code tx} is null when BEGIN itself never went out. */
    private static Uni<Void> rollbackQuietly(Transaction tx) {
        return tx == null ? Uni.createFrom().voidItem() : tx.rollback().onFailure().recoverWithNull();
    }
}
