package dev.idem.extension.it;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** All SQL on {@code ledger}. */
@ApplicationScoped
public class Ledger {

    /** The entry, and the account's balance with it. */
    private static final String ENTER = """
            WITH entry AS (
                INSERT INTO ledger (account, amount, ref) VALUES ($1, $2, $3)
                RETURNING id, amount)
            SELECT entry.id, entry.amount + (SELECT coalesce(sum(amount), 0) FROM ledger WHERE account = $1) AS balance
            FROM entry""";

    /** An entry made, and the balance of its account after it. */
    public record Entered(long id, long balance) {}

    /** Enters {@code amount} on {@code account} in {@code tx}, the pipeline's transaction. */
    public Uni<Entered> enter(SqlConnection tx, String account, long amount, String ref) {
        return tx.preparedQuery(ENTER).execute(Tuple.of(account, amount, ref)).map(rows -> {
            Row row = rows.iterator().next();
            return new Entered(row.getLong("id"), row.getLong("balance"));
        });
    }
}
