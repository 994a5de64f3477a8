package dev.idem.pipeline;

import static dev.idem.pipeline.SqlTime.instant;
import static dev.idem.pipeline.PgDedupStore.toRecord;
import static dev.idem.pipeline.SqlTime.ts;

import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * Keeps the hot table small: DONE records past their retention move to {@code dedup_record_archive}
 * in bounded batches, every {@code idem.pipeline.archive.interval}. Only DONE records move:
 * unfinished and FAILED ones stay where recovery and reconciliation look. All SQL on the archive
 * table is here. Idempotent, and safe to run on several instances at once.
 */
@ApplicationScoped
class DedupArchive {

    private static final Logger LOG = Logger.getLogger(DedupArchive.class);

    /**
     * One bounded batch in one statement: rows being used by a delivery right now are skipped,
     * not waited for, so archiving never holds up traffic; a delivery that waited on a row that
     * moved claims the key afresh and meets the state machine.
     */
    private static final String MOVE = """
            WITH batch AS (
                SELECT scope, key FROM dedup_record
                WHERE expires_at < $1 AND status = 'DONE'
                ORDER BY expires_at LIMIT $2
                FOR UPDATE SKIP LOCKED),
            moved AS (
                DELETE FROM dedup_record d USING batch
                WHERE d.scope = batch.scope AND d.key = batch.key
                RETURNING d.scope, d.key, d.fingerprint, d.status, d.result, d.attempts, d.lease_until,
                          d.created_at, d.updated_at, d.expires_at)
            INSERT INTO dedup_record_archive
                (scope, key, fingerprint, status, result, attempts, lease_until, created_at, updated_at, expires_at, archived_at)
            SELECT scope, key, fingerprint, status, result, attempts, lease_until, created_at, updated_at, expires_at, $1
            FROM moved
            ON CONFLICT ON CONSTRAINT dedup_record_archive_pk DO NOTHING""";

    private static final String FIND = """
            SELECT scope, key, fingerprint, status, result, attempts, lease_until, created_at, updated_at, expires_at, archived_at
            FROM dedup_record_archive WHERE scope = $1 AND key = $2 ORDER BY created_at""";

    private final Pool pool;
    private final PipelineConfig.Archive config;
    private final Clock clock;

    DedupArchive(Pool pool, PipelineConfig config, Clock clock) {
        this.pool = pool;
        this.config = config.archive();
        this.clock = clock;
    }

    /**
     * One scheduled run, every {@code idem.pipeline.archive.interval} ({@code off}: only when an
     * operator asks), the first after start-up's traffic has passed: what it moved is logged, a
     * failure waits for the next run.
     */
    @Scheduled(identity = DedupAdmin.ARCHIVE_JOB, every = "${idem.pipeline.archive.interval}", delayed = "1m",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> scheduled() {
        return archiveNow()
                .invoke(moved -> {
                    if (moved > 0) {
                        LOG.infof("Archived %d dedup records", moved);
                    }
                })
                .onFailure().invoke(failure -> LOG.warnf("Archiving dedup records failed, the next run retries: %s",
                        failure.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /** Moves DONE records past their retention, in batches; how many moved. */
    Uni<Integer> archiveNow() {
        Instant now = clock.instant();
        return inBatches(limit -> pool.preparedQuery(MOVE).execute(Tuple.of(ts(now), limit)).map(rows -> rows.rowCount()));
    }

    /**
     * Runs {@code batch} (move up to n rows, answer how many moved) with n = {@code batch-size}
     * until one comes back short (nothing left) or {@code max-batches} ran; how many moved.
     */
    Uni<Integer> inBatches(Function<Integer, Uni<Integer>> batch) {
        return drain(batch, 0, 0);
    }

    private Uni<Integer> drain(Function<Integer, Uni<Integer>> batch, int moved, int batches) {
        if (batches >= config.maxBatches()) {
            return Uni.createFrom().item(moved);
        }
        return batch.apply(config.batchSize()).chain(count -> count < config.batchSize()
                ? Uni.createFrom().item(moved + count)
                : drain(batch, moved + count, batches + 1));
    }

    /** The archived records of one key, oldest first, each with when it was archived. */
    Uni<List<Archived>> find(String scope, String key) {
        return pool.preparedQuery(FIND).execute(Tuple.of(scope, key)).map(rows -> {
            List<Archived> out = new ArrayList<>();
            for (Row row : rows) {
                out.add(new Archived(toRecord(row), instant(row, "archived_at")));
            }
            return out;
        });
    }

    record Archived(DedupRecord record, Instant archivedAt) {}
}
