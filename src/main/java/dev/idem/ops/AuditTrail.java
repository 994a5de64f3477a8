package dev.idem.ops;

import static dev.idem.pipeline.SqlTime.ts;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.List;

/**
 * All SQL on {@code admin_audit}: who asked the admin API to change what, and who was refused.
 * Rows are only ever added; the table's triggers refuse UPDATE and DELETE, except a DELETE of a
 * row already copied unchanged into {@code admin_audit_archive}, which is how {@link #archive} moves them.
 */
@ApplicationScoped
public class AuditTrail {

    /** One request's entry; {@code name}, {@code target} and {@code result} may be null. */
    public record Entry(Instant at, Operator operator, String action, String target, JsonObject parameters,
                        JsonObject result, int status) {
    }

    private static final String RECORD = """
            INSERT INTO admin_audit (at, subject, name, roles, action, target, parameters, result, status)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)""";

    private static final String NEWEST = """
            SELECT at, subject, name, roles, action, target, parameters, result, status FROM admin_audit
            WHERE at >= $1 ORDER BY at DESC, id DESC LIMIT $2""";

    private static final String ARCHIVE = """
            WITH old AS (SELECT * FROM admin_audit WHERE at < $1 ORDER BY id LIMIT $2),
                 copied AS (INSERT INTO admin_audit_archive SELECT * FROM old ON CONFLICT (id) DO NOTHING)
            SELECT id FROM old""";

    private static final String DROP_ARCHIVED = "DELETE FROM admin_audit WHERE id = ANY($1)";

    private final Pool pool;

    AuditTrail(Pool pool) {
        this.pool = pool;
    }

    public Uni<Void> record(Entry entry) {
        Operator who = entry.operator();
        return pool.preparedQuery(RECORD).execute(Tuple.tuple()
                        .addOffsetDateTime(ts(entry.at())).addString(who.subject()).addString(who.name())
                        .addArrayOfString(who.roles().toArray(String[]::new)).addString(entry.action())
                        .addString(entry.target()).addJsonObject(entry.parameters()).addJsonObject(entry.result())
                        .addInteger(entry.status()))
                .replaceWithVoid();
    }

    /** The newest {@code limit} entries from {@code since} on, newest first, as {@code GET /admin/audit} lists them. */
    public Uni<JsonArray> newest(Instant since, int limit) {
        return pool.preparedQuery(NEWEST).execute(Tuple.of(ts(since), limit)).map(rows -> {
            JsonArray entries = new JsonArray();
            for (Row row : rows) {
                entries.add(new JsonObject()
                        .put("at", row.getOffsetDateTime("at").toInstant().toString())
                        .put("subject", row.getString("subject"))
                        .put("name", row.getString("name"))
                        .put("roles", new JsonArray(List.of(row.getArrayOfStrings("roles"))))
                        .put("action", row.getString("action"))
                        .put("target", row.getString("target"))
                        .put("parameters", row.getJsonObject("parameters"))
                        .put("status", row.getInteger("status"))
                        .put("result", row.getJsonObject("result")));
            }
            return entries;
        });
    }

    /** Moves up to {@code limit} entries older than {@code before} into the archive; how many moved. */
    public Uni<Integer> archive(Instant before, int limit) {
        return pool.withTransaction(tx -> tx.preparedQuery(ARCHIVE).execute(Tuple.of(ts(before), limit))
                .chain(rows -> {
                    Long[] ids = new Long[rows.size()];
                    int i = 0;
                    for (Row row : rows) {
                        ids[i++] = row.getLong("id");
                    }
                    return ids.length == 0 ? Uni.createFrom().item(0)
                            : tx.preparedQuery(DROP_ARCHIVED).execute(Tuple.of(ids)).map(deleted -> deleted.rowCount());
                }));
    }
}
