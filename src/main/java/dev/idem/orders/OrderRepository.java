package dev.idem.orders;

import static dev.idem.pipeline.SqlTime.instant;
import static dev.idem.pipeline.SqlTime.ts;

import dev.idem.pipeline.Statement;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/** All SQL on {@code orders}. State moves only through the conditional updates below. */
@ApplicationScoped
public class OrderRepository {

    private static final String COLUMNS =
            "id, user_id, amount_cents, currency, status, trade_no, created_at, paid_at, gateway";

    private static final String INSERT = """
            INSERT INTO orders (id, user_id, amount_cents, currency, status, created_at, gateway, query_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)""";

    private static final String FIND = "SELECT " + COLUMNS + " FROM orders WHERE id = $1";

    private static final String FIND_ALL = "SELECT " + COLUMNS + " FROM orders WHERE id = ANY($1)";

    private static final String PAY = """
            UPDATE orders SET status = 'PAID', trade_no = $2, paid_at = $4, campaign = $5, gateway = COALESCE(gateway, $6)
            WHERE id = $1 AND status IN (%s) AND amount_cents = $3
              AND NOT EXISTS (SELECT 1 FROM orders other WHERE other.trade_no = $2)
            RETURNING user_id""".formatted(sources(OrderStatus.PAID));

    private static final String EARNED = "SELECT user_id, campaign FROM orders WHERE id = $1 AND campaign IS NOT NULL";

    private static final String CLOSE = """
            UPDATE orders SET status = 'CLOSED', closed_at = $2
            WHERE id = $1 AND status IN (%s)
            RETURNING user_id""".formatted(sources(OrderStatus.CLOSED));

    /**
     * Due orders still waiting for their payment, oldest due first, at most $2; rows another claimer
     * holds are skipped. Each is either claimed, its next query moved a lease ahead ($5) so that no
     * other instance asks the gateway about it meanwhile, and its queries counted; or, once it expired
     * (created before $3) or names a gateway that is not queried ($4), taken off the schedule.
     * One statement: the claim commits with it, and the lease is what keeps others off.
     */
    private static final String CLAIM_QUERIES = """
            WITH due AS (
                SELECT id, created_at > $3 AND (gateway IS NULL OR gateway = ANY($4)) AS asked
                FROM orders
                WHERE status = 'WAIT_PAY' AND query_at <= $1
                ORDER BY query_at LIMIT $2
                FOR UPDATE SKIP LOCKED)
            UPDATE orders o
            SET query_at = CASE WHEN due.asked THEN $5::timestamptz END,
                queries = o.queries + CASE WHEN due.asked THEN 1 ELSE 0 END
            FROM due
            WHERE o.id = due.id
            RETURNING o.id, o.gateway, o.created_at, o.queries, due.asked""";

    /** The claim's own query done: when the next one is due (NULL: none), unless another took it over since. */
    private static final String SCHEDULE_QUERY = """
            UPDATE orders SET query_at = $3
            WHERE id = $1 AND queries = $2 AND status = 'WAIT_PAY'""";

    private static final String PAID_VIA = """
            SELECT id, trade_no, amount_cents, paid_at FROM orders
            WHERE status = 'PAID' AND gateway = $1 AND paid_at >= $2 AND paid_at < $3""";

    /** A paid order as a gateway's bill is compared with it. */
    public record Paid(String orderId, String tradeNo, long amountCents, Instant paidAt) {}

    /** The orders {@code gateway} was paid for from {@code from} up to {@code until}. */
    public Uni<List<Paid>> paidVia(SqlClient client, PaymentGateway gateway, Instant from, Instant until) {
        return client.preparedQuery(PAID_VIA).execute(Tuple.of(gateway.id(), ts(from), ts(until)))
                .map(rows -> {
                    List<Paid> paid = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        paid.add(new Paid(row.getString("id"), row.getString("trade_no"), row.getLong("amount_cents"),
                                instant(row, "paid_at")));
                    }
                    return paid;
                });
    }

    /** {@code firstQueryAt}: when the order's payment is first asked of its gateway; null: never. */
    public Uni<Void> insert(SqlClient client, Order order, Instant firstQueryAt) {
        return inserting(order, firstQueryAt).on(client).replaceWithVoid();
    }

    /** {@link #insert} as a statement not yet sent, for a submit whose answer is known before it runs. */
    public Statement inserting(Order order, Instant firstQueryAt) {
        return Statement.of(INSERT, Tuple.from(new Object[] {order.orderId(), order.userId(), order.amountCents(),
                order.currency(), order.status().name(), ts(order.createdAt()),
                order.gateway() == null ? null : order.gateway().id(), firstQueryAt == null ? null : ts(firstQueryAt)}));
    }

    /** An order claimed for a query of its gateway(s): {@code queries} counts this one. */
    public record QueryClaim(String orderId, PaymentGateway gateway, Instant createdAt, int queries) {}

    /**
     * Claims up to {@code limit} orders whose query is due at {@code now}, for {@code lease}. Orders
     * created before {@code expiredBefore}, or naming a gateway not in {@code queried}, leave the
     * schedule instead.
     */
    public Uni<List<QueryClaim>> claimQueries(SqlClient client, Instant now, int limit, Instant expiredBefore,
                                             List<PaymentGateway> queried, Duration lease) {
        String[] gateways = queried.stream().map(PaymentGateway::id).toArray(String[]::new);
        return client.preparedQuery(CLAIM_QUERIES)
                .execute(Tuple.from(new Object[] {ts(now), limit, ts(expiredBefore), gateways, ts(now.plus(lease))}))
                .map(rows -> {
                    List<QueryClaim> claims = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        if (row.getBoolean("asked")) {
                            claims.add(new QueryClaim(row.getString("id"), gateway(row),
                                    instant(row, "created_at"), row.getInteger("queries")));
                        }
                    }
                    return claims;
                });
    }

    /**
     * After the claim's query: the next one at {@code next}, none when null. Changes nothing if the
     * order was settled meanwhile or claimed again (its lease ran out).
     */
    public Uni<Void> scheduleQuery(SqlClient client, QueryClaim claim, Instant next) {
        return client.preparedQuery(SCHEDULE_QUERY)
                .execute(Tuple.of(claim.orderId(), claim.queries(), next == null ? null : ts(next)))
                .replaceWithVoid();
    }

    public Uni<Optional<Order>> find(SqlClient client, String orderId) {
        return client.preparedQuery(FIND).execute(Tuple.of(orderId))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(toOrder(rows.iterator().next())));
    }

    /** The orders of these ids that exist, in no particular order. */
    public Uni<List<Order>> findAll(SqlClient client, List<String> orderIds) {
        return client.preparedQuery(FIND_ALL).execute(Tuple.of(orderIds.toArray(String[]::new)))
                .map(rows -> {
                    List<Order> found = new ArrayList<>(rows.size());
                    rows.forEach(row -> found.add(toOrder(row)));
                    return found;
                });
    }

    /**
     * WAIT_PAY → PAID for the right amount, unless the trade number already pays an order; the
     * order keeps the campaign it earned ({@code null}: none) and, when it named no gateway, comes to
     * name {@code via} (null: not known). Answers the owner's user id when the order moved, empty
     * when no row matched.
     */
    public Uni<Optional<String>> pay(SqlClient client, String orderId, String tradeNo, long amountCents, Instant paidAt,
                                     String campaign, PaymentGateway via) {
        return client.preparedQuery(PAY)
                .execute(Tuple.from(new Object[] {orderId, tradeNo, amountCents, ts(paidAt), campaign,
                        via == null ? null : via.id()}))
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
                instant(row, "paid_at"),
                gateway(row));
    }

    private static PaymentGateway gateway(Row row) {
        String id = row.getString("gateway");
        return id == null ? null : PaymentGateway.named(id).orElseThrow();
    }
}
