package dev.idem.pipeline;

import static dev.idem.pipeline.PgDedupStore.COLUMNS;
import static dev.idem.pipeline.PgDedupStore.toRecord;
import static dev.idem.pipeline.SqlTime.ts;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The SQL of {@link DedupRecords}: recovery's, reconciliation's and operators' statements on {@code dedup_record}. */
@ApplicationScoped
class PgDedupRecords implements DedupRecords {

    private static final String FIND = "SELECT " + COLUMNS + " FROM dedup_record WHERE scope = $1 AND key = $2";


    /** Only a DONE record: an unfinished one belongs to its lease holder, a FAILED one to reconciliation. */
    private static final String FORGET = "DELETE FROM dedup_record WHERE scope = $1 AND key = $2 AND status = 'DONE'";

    /** Its lease ends a microsecond before now: hanging at once, and taken over by the caller. */
    private static final String REOPEN = """
            UPDATE dedup_record SET status = 'PROCESSING', attempts = 0,
                                    lease_until = $3::timestamptz - interval '1 microsecond', updated_at = $3
            WHERE scope = $1 AND key = $2 AND status = 'FAILED' AND payload IS NOT NULL
            RETURNING %s""".formatted(COLUMNS);

    /** Served by dedup_record_unfinished_two_phase: only unfinished two-phase records carry a payload. */
    private static final String HANGING = """
            SELECT %s FROM dedup_record
            WHERE payload IS NOT NULL AND status = 'PROCESSING' AND lease_until < $1
            ORDER BY lease_until
            LIMIT $2""".formatted(COLUMNS);

    /** Served by the same index: reconciliation's view of the unfinished two-phase records. */
    private static final String UNFINISHED = """
            SELECT d.status, count(*) AS total, (array_agg(d.scope || ':' || d.key ORDER BY d.created_at))[1:$3] AS samples
            FROM dedup_record d
            WHERE d.payload IS NOT NULL AND d.created_at >= $1
              AND (d.status = 'FAILED' OR (d.status = 'PROCESSING' AND d.lease_until < $2))
            GROUP BY d.status""";

    /** Marks live shorter than records stay hot (the TTLs are under the retention): no archive to look in. */
    private static final String WITHOUT_RECORD = """
            SELECT m.scope, m.key FROM unnest($1::text[], $2::text[]) AS m(scope, key)
            WHERE NOT EXISTS (SELECT 1 FROM dedup_record d WHERE d.scope = m.scope AND d.key = m.key)""";

    private final Pool pool;

    PgDedupRecords(Pool pool) {
        this.pool = pool;
    }

    @Override
    public Uni<Optional<DedupRecord>> find(String scope, String key) {
        return pool.preparedQuery(FIND).execute(Tuple.of(scope, key))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(toRecord(rows.iterator().next())));
    }

    @Override
    public Uni<List<DedupCache.Mark>> withoutRecord(List<DedupCache.Mark> marks) {
        if (marks.isEmpty()) {
            return Uni.createFrom().item(List.of());
        }
        return pool.preparedQuery(WITHOUT_RECORD).execute(Tuple.tuple()
                        .addArrayOfString(marks.stream().map(DedupCache.Mark::scope).toArray(String[]::new))
                        .addArrayOfString(marks.stream().map(DedupCache.Mark::key).toArray(String[]::new)))
                .map(rows -> {
                    List<DedupCache.Mark> missing = new ArrayList<>();
                    rows.forEach(row -> missing.add(new DedupCache.Mark(row.getString("scope"), row.getString("key"))));
                    return missing;
                });
    }

    @Override
    public Uni<Boolean> forget(String scope, String key) {
        return pool.preparedQuery(FORGET).execute(Tuple.of(scope, key)).map(rows -> rows.rowCount() == 1);
    }

    @Override
    public Uni<Optional<DedupRecord>> reopen(String scope, String key, Instant now) {
        return pool.preparedQuery(REOPEN).execute(Tuple.of(scope, key, ts(now)))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(toRecord(rows.iterator().next())));
    }

    @Override
    public Uni<List<DedupRecord>> hanging(Instant now, int limit) {
        return pool.preparedQuery(HANGING).execute(Tuple.of(ts(now), limit)).map(rows -> {
            List<DedupRecord> records = new ArrayList<>();
            rows.forEach(row -> records.add(toRecord(row)));
            return records;
        });
    }

    @Override
    public Uni<List<Finding>> unfinished(Instant since, Instant now, int samples) {
        return pool.preparedQuery(UNFINISHED).execute(Tuple.of(ts(since), ts(now), samples)).map(rows -> {
            Map<String, Finding> byStatus = new HashMap<>();
            for (Row row : rows) {
                String status = row.getString("status");
                String[] keys = row.getArrayOfStrings("samples");
                byStatus.put(status, new Finding(
                        status.equals("FAILED") ? DedupAdmin.FAILED : DedupAdmin.HANGING,
                        row.getLong("total"), keys == null ? List.of() : List.of(keys)));
            }
            return List.of(
                    byStatus.getOrDefault("PROCESSING", new Finding(DedupAdmin.HANGING, 0, List.of())),
                    byStatus.getOrDefault("FAILED", new Finding(DedupAdmin.FAILED, 0, List.of())));
        });
    }
}
