package dev.idem.orders;

import static dev.idem.pipeline.SqlTime.instant;
import static dev.idem.pipeline.SqlTime.ts;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Collectors;

/** All SQL on {@code orders}. State moves only through the conditional updates below. */
@ApplicationScoped
public class OrderRepository {

    private static final String COLUMNS = "id, user_id, amount_cents, currency, status, trade_no, created_at, paid_at";

    private static final String INSERT = """
            INSERT INTO orders (id, user_id, amount_cents, currency, status, created_at)
            VALUES ($1, $2, $3, $4, $5, $6)""";

    private static final String FIND = "SELECT " + COLUMNS + " FROM orders WHERE id = $1";

    private static final String PAY = """
            UPDATE orders SET status = 'PAID', trade_no = $2, paid_at = $4, campaign = $5
            WHERE id = $1 AND status IN (%s) AND amount_cents = $3
              AND NOT EXISTS (SELECT 1 FROM orders other WHERE other.trade_no = $2)
            RETURNING user_id""".formatted(sources(OrderStatus.PAID));

    private static final String EARNED = "SELECT user_id, campaign FROM orders WHERE id = $1 AND campaign IS NOT NULL";

    private static final String CLOSE = """
            UPDATE orders SET status = 'CLOSED', closed_at = $2
            WHERE id = $1 AND status IN (%s)
            RETURNING user_id""".formatted(sources(OrderStatus.CLOSED));

    public Uni<Void> insert(SqlClient client, Order order) {
        return client.preparedQuery(INSERT)
                .execute(Tuple.of(order.orderId(), order.userId(), order.amountCents(), order.currency(),
                        order.status().name(), ts(order.createdAt())))
                .replaceWithVoid();
    }

    public Uni<Optional<Order>> find(SqlClient client, String orderId) {
        return client.preparedQuery(FIND).execute(Tuple.of(orderId))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(toOrder(rows.iterator().next())));
    }

    /**
     * WAIT_PAY → PAID for the right amount, unless the trade number already pays an order; the
     * order keeps the campaign it earned ({@code null}: none). Answers the owner's user id when the
     * order moved, empty when no row matched.
     */
    public Uni<Optional<String>> pay(SqlClient client, String orderId, String tradeNo, long amountCents, Instant paidAt,
                                     String campaign) {
        return client.preparedQuery(PAY).execute(Tuple.of(orderId, tradeNo, amountCents, ts(paidAt), campaign))
                .map(OrderRepository::movedOwner);
    }

    /** The campaign a paid order earned, with its owner; empty when it earned none or does not exist. */
    public Uni<Optional<Earned>> earned(SqlClient client, String orderId) {
        return client.preparedQuery(EARNED).execute(Tuple.of(orderId))
                .map(rows -> {
                    if (rows.size() == 0) {
                        return Optional.empty();
                    }
                    Row row = rows.iterator().next();
                    return Optional.of(new Earned(row.getString("user_id"), row.getString("campaign")));
                });
    }

    public record Earned(String userId, String campaign) {}

    /** WAIT_PAY → CLOSED. Answers the owner's user id when the order moved. */
    public Uni<Optional<String>> close(SqlClient client, String orderId, Instant closedAt) {
        return client.preparedQuery(CLOSE).execute(Tuple.of(orderId, ts(closedAt)))
                .map(OrderRepository::movedOwner);
    }

    private static Optional<String> movedOwner(RowSet<Row> rows) {
        return rows.size() == 0 ? Optional.empty() : Optional.of(rows.iterator().next().getString("user_id"));
    }

    private static String sources(OrderStatus target) {
        return OrderStateMachine.sourcesOf(target).stream()
                .map(s -> "'" + s.name() + "'")
                .collect(Collectors.joining(", "));
    }

    private static Order toOrder(Row row) {
        return new Order(
                row.getString("id"),
                row.getString("user_id"),
                row.getLong("amount_cents"),
                row.getString("currency"),
                OrderStatus.valueOf(row.getString("status")),
                row.getString("trade_no"),
                instant(row, "created_at"),
                instant(row, "paid_at"));
    }
}
