package dev.idem.coupons;

import static dev.idem.pipeline.SqlTime.instant;
import static dev.idem.pipeline.SqlTime.ts;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** All SQL on {@code coupons}. */
@ApplicationScoped
public class CouponRepository {

    /** {@code coupons_one_per_source} turns a grant that got past every other layer into a no-op. */
    private static final String GRANT = """
            INSERT INTO coupons (id, user_id, template_id, source_key, order_id, granted_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT ON CONSTRAINT coupons_one_per_source DO NOTHING
            RETURNING id""";

    private static final String OF_USER = """
            SELECT id, user_id, template_id, source_key, order_id, granted_at
            FROM coupons WHERE user_id = $1 ORDER BY granted_at, id""";

    /** True when this call inserted the coupon, false when its source already had one. */
    public Uni<Boolean> grant(SqlClient client, Coupon coupon) {
        return client.preparedQuery(GRANT)
                .execute(Tuple.from(Arrays.asList(coupon.couponId(), coupon.userId(), coupon.templateId(),
                        coupon.sourceKey(), coupon.orderId(), ts(coupon.grantedAt()))))
                .map(rows -> rows.size() == 1);
    }

    public Uni<List<Coupon>> ofUser(SqlClient client, String userId) {
        return client.preparedQuery(OF_USER).execute(Tuple.of(userId)).map(rows -> {
            List<Coupon> coupons = new ArrayList<>();
            for (Row row : rows) {
                coupons.add(new Coupon(row.getString("id"), row.getString("user_id"), row.getString("template_id"),
                        row.getString("source_key"), row.getString("order_id"), instant(row, "granted_at")));
            }
            return coupons;
        });
    }
}
