package dev.idem.ops;

import static dev.idem.pipeline.SqlTime.ts;

import dev.idem.pipeline.DedupAdmin;
import dev.idem.pipeline.Finding;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The reconciliation's questions about the service's own tables, each one SQL statement across
 * the tables whose agreement it checks (the pipeline answers those about its dedup records).
 * Read-only. Each answers the total and a few sample ids.
 * Parameters: $1 cutoff (now minus grace), $2 since, $3 sample limit, $4 now.
 */
@ApplicationScoped
public class ReconciliationChecks {

    /** One question: its name in the report, and the SQL that lists the offending ids. */
    public enum Check {
        PAID_ORDERS_WITHOUT_COUPON("paidOrdersWithoutCoupon", """
                SELECT o.id FROM orders o
                LEFT JOIN outbox_event e ON e.topic = 'coupon-grants' AND e.event_key = 'paid:' || o.id
                WHERE o.status = 'PAID' AND o.campaign IS NOT NULL AND o.created_at >= $2
                  AND COALESCE(e.created_at, o.paid_at) < $1
                  AND NOT EXISTS (SELECT 1 FROM coupons c WHERE c.source_key = 'paid:' || o.id)"""),
        COUPONS_WITHOUT_PAID_ORDER("couponsWithoutPaidOrder", """
                SELECT c.id FROM coupons c LEFT JOIN orders o ON o.id = c.order_id
                WHERE c.order_id IS NOT NULL AND c.granted_at >= $2 AND (o.id IS NULL OR o.status <> 'PAID')"""),
        ORDERS_WITH_SEVERAL_COUPONS("ordersWithSeveralCoupons", """
                SELECT c.order_id FROM coupons c
                WHERE c.order_id IS NOT NULL AND c.granted_at >= $2
                GROUP BY c.order_id HAVING count(*) > 1"""),
        UNRESOLVED_ANOMALIES("unresolvedAnomalies", """
                SELECT a.kind || ':' || a.order_id FROM payment_anomaly a
                WHERE NOT a.resolved AND a.created_at >= $2"""),
        STALE_OUTBOX_EVENTS("staleOutboxEvents", """
                SELECT e.event_key FROM outbox_event e
                WHERE e.published_at IS NULL AND e.created_at < $1 AND e.created_at >= $2""");

        public final String label;
        final String sql;

        Check(String label, String ids) {
            this.label = label;
            // the count over all offenders and the first few of them, in one round trip; every check
            // takes the same four parameters, and naming all of them lets Postgres type the unused ones
            this.sql = "WITH offenders(id) AS (" + ids + ") "
                    + "SELECT (SELECT count(*) FROM offenders) AS total, "
                    + "ARRAY(SELECT id::text FROM offenders ORDER BY 1 LIMIT $3) AS samples "
                    + "WHERE $4::timestamptz IS NOT NULL AND $1::timestamptz IS NOT NULL";
        }
    }

    public Uni<Finding> run(SqlClient client, Check check, Instant cutoff, Instant since, int samples, Instant now) {
        return client.preparedQuery(check.sql).execute(Tuple.of(ts(cutoff), ts(since), samples, ts(now))).map(rows -> {
            Row row = rows.iterator().next();
            List<String> ids = new ArrayList<>();
            for (String id : row.getArrayOfStrings("samples")) {
                ids.add(id);
            }
            return new Finding(check.label, row.getLong("total"), ids);
        });
    }
}
