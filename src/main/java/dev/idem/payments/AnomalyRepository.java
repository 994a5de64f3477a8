package dev.idem.payments;

import static dev.idem.pipeline.SqlTime.ts;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;

/** All SQL on {@code payment_anomaly}. */
@ApplicationScoped
public class AnomalyRepository {

    private static final String RECORD = """
            INSERT INTO payment_anomaly (kind, order_id, trade_no, callback_status, detail, created_at)
            VALUES ($1, $2, $3, $4, $5, $6)""";

    /** Kept in the delivery's own transaction: the anomaly is stored exactly when its dedup record is. */
    public Uni<Void> record(SqlConnection tx, String kind, PaymentCallback callback, JsonObject detail, Instant now) {
        return tx.preparedQuery(RECORD)
                .execute(Tuple.of(kind, callback.orderId(), callback.tradeNo(), callback.status(), detail, ts(now)))
                .replaceWithVoid();
    }
}
