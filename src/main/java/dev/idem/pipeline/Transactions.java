package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Transaction;
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

    /** {@code tx} is null when BEGIN itself never went out. */
    private static Uni<Void> rollbackQuietly(Transaction tx) {
        return tx == null ? Uni.createFrom().voidItem() : tx.rollback().onFailure().recoverWithNull();
    }
}
