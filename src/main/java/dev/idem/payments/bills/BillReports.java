package dev.idem.payments.bills;

import static dev.idem.pipeline.SqlTime.ts;

import dev.idem.orders.PaymentGateway;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** All SQL on {@code gateway_bills}: the last import's report of each gateway and day. */
@ApplicationScoped
public class BillReports {

    private static final String SAVE = """
            INSERT INTO gateway_bills (gateway, bill_date, imported_at, report) VALUES ($1, $2, $3, $4)
            ON CONFLICT (gateway, bill_date) DO UPDATE SET imported_at = EXCLUDED.imported_at, report = EXCLUDED.report""";

    private static final String FIND = "SELECT report FROM gateway_bills WHERE gateway = $1 AND bill_date = $2";

    private static final String LATEST = "SELECT report FROM gateway_bills ORDER BY imported_at DESC LIMIT $1";

    public Uni<Void> save(SqlClient client, PaymentGateway gateway, LocalDate date, Instant importedAt, JsonObject report) {
        return client.preparedQuery(SAVE).execute(Tuple.of(gateway.id(), date, ts(importedAt), report)).replaceWithVoid();
    }

    public Uni<Optional<JsonObject>> find(SqlClient client, PaymentGateway gateway, LocalDate date) {
        return client.preparedQuery(FIND).execute(Tuple.of(gateway.id(), date))
                .map(rows -> rows.size() == 0 ? Optional.empty()
                        : Optional.of(rows.iterator().next().getJsonObject("report")));
    }

    /** The newest {@code limit} reports, every gateway's, newest first. */
    public Uni<List<JsonObject>> latest(SqlClient client, int limit) {
        return client.preparedQuery(LATEST).execute(Tuple.of(limit)).map(rows -> {
            List<JsonObject> reports = new ArrayList<>(rows.size());
            for (Row row : rows) {
                reports.add(row.getJsonObject("report"));
            }
            return reports;
        });
    }
}
