package dev.idem.pipeline;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * What operators do with dedup records, for a service's admin endpoints and reconciliation: take
 * over hanging records now, archive now, read one key's trail through every layer, let a key be
 * processed again, and count what is unfinished. The same jobs also run on their own schedules
 * ({@code idem.pipeline.recovery-interval}, {@code idem.pipeline.archive.interval}).
 */
@ApplicationScoped
public class DedupAdmin {

    private static final Logger LOG = Logger.getLogger(DedupAdmin.class);
    private static final int MARK_BATCH = 1_000;

    /** The scheduler identities of the recovery and archiving jobs, to pause or resume them. */
    public static final String RECOVERY_JOB = "dedup-recovery";
    public static final String ARCHIVE_JOB = "dedup-archive";

    /** Reconciliation's names for the unfinished two-phase records. */
    public static final String HANGING = "hangingDedupRecords";
    public static final String FAILED = "failedDedupRecords";
    /** Reconciliation's name for the keys that Redis holds as DONE and Postgres has no record of. */
    public static final String MARKS_WITHOUT_RECORD = "doneMarksWithoutRecord";

    /**
     * One recovery pass over hanging two-phase records: how many it looked at, took over (and ran
     * their effect again), saw confirmed DONE, and marked FAILED. A record another process seized
     * first is examined and nothing else.
     */
    public record RedriveReport(int examined, int takenOver, int done, int failed) {

        static RedriveReport of(List<Resumption> resumptions) {
            int takenOver = 0;
            int done = 0;
            int failed = 0;
            for (Resumption resumption : resumptions) {
                takenOver += resumption.takenOver() ? 1 : 0;
                done += resumption == Resumption.DONE ? 1 : 0;
                failed += resumption.failed() ? 1 : 0;
            }
            return new RedriveReport(resumptions.size(), takenOver, done, failed);
        }

        /** {@code {"examined","takenOver","done","failed"}}, for an admin endpoint's answer. */
        public JsonObject toJson() {
            return new JsonObject()
                    .put("examined", examined)
                    .put("takenOver", takenOver)
                    .put("done", done)
                    .put("failed", failed);
        }
    }

    private final HangingRecords hanging;
    private final DedupArchive archive;
    private final DedupRecords records;
    private final DedupCache cache;
    private final PipelineConfig config;
    private final Clock clock;

    DedupAdmin(HangingRecords hanging, DedupArchive archive, DedupRecords records, DedupCache cache,
               PipelineConfig config, Clock clock) {
        this.hanging = hanging;
        this.archive = archive;
        this.records = records;
        this.cache = cache;
        this.config = config;
        this.clock = clock;
    }

    /**
     * Takes over the records hanging now, the longest-hanging first, at most
     * {@code idem.pipeline.recovery-batch-size} of them. Safe beside other instances doing the same.
     */
    public Uni<RedriveReport> redriveHanging() {
        return hanging.redriveHanging();
    }

    /**
     * Runs a FAILED two-phase record again now, once its cause is fixed, with all its attempts:
     * {@code DONE}, {@code RETRYING} (failed again, tried after the retry delay), {@code FAILED},
     * {@code LOST} (another process took it first) or {@code UNHANDLED} (no work for its scope
     * here). Empty when the key has no FAILED two-phase record.
     */
    public Uni<Optional<String>> redriveFailed(String scope, String key) {
        return hanging.redriveFailed(scope, key).map(done -> done.map(Resumption::name));
    }

    /** Moves DONE records past their retention to the archive now; answers how many moved. */
    public Uni<Integer> archiveNow() {
        return archive.archiveNow();
    }

    /**
     * Archives a service's own table on the pipeline's archive settings: runs {@code batch} (move up
     * to n rows, each in its own statement; answer how many moved) with n =
     * {@code idem.pipeline.archive.batch-size}, until one comes back short or
     * {@code archive.max-batches} ran. Answers how many moved.
     */
    public Uni<Integer> archiveInBatches(Function<Integer, Uni<Integer>> batch) {
        return archive.inBatches(batch);
    }

    /**
     * Unfinished two-phase records written since {@code since}: {@link #HANGING}, then
     * {@link #FAILED}; then {@link #MARKS_WITHOUT_RECORD}, whatever their age: payments answered
     * SUCCESS whose change the database no longer has, and whose next delivery the mark would answer
     * as a duplicate (nothing is counted there while Redis cannot be read).
     */
    public Uni<List<Finding>> findings(Instant since, int samples) {
        return records.unfinished(since, clock.instant(), samples).chain(unfinished -> marksWithoutRecord()
                .map(marks -> {
                    List<Finding> all = new ArrayList<>(unfinished);
                    all.add(new Finding(MARKS_WITHOUT_RECORD, marks.size(),
                            marks.stream().limit(samples).map(m -> m.scope() + ":" + m.key()).toList()));
                    return all;
                }));
    }

    /**
     * Drops the DONE marks whose record is gone, so that the next delivery of such a key (the
     * gateway's, an active query's) is applied rather than answered as a duplicate; answers how many.
     */
    public Uni<Integer> dropMarksWithoutRecord() {
        return marksWithoutRecord().chain(marks -> Multi.createFrom().iterable(marks)
                .onItem().transformToUniAndConcatenate(mark -> cache.forget(mark.scope(), mark.key()))
                .collect().asList()
                .map(dropped -> marks.size()));
    }

    private Uni<List<DedupCache.Mark>> marksWithoutRecord() {
        return cache.doneMarks(config.markScanLimit())
                .onFailure().invoke(failure -> LOG.warnf("DONE marks not read from the cache: %s", failure.toString()))
                .onFailure().recoverWithItem(List.of())
                .onItem().transformToMulti(marks -> Multi.createFrom().iterable(marks))
                .group().intoLists().of(MARK_BATCH)
                .onItem().transformToUniAndConcatenate(records::withoutRecord)
                .onItem().transformToIterable(missing -> missing)
                .collect().asList();
    }

    /**
     * Lets a key be processed again. For repair only: when reconciliation finds that the effect a
     * DONE record vouches for is gone (a row deleted by hand), the record must go too, or the
     * re-sent work would be answered as a duplicate. The business tables' own unique keys still
     * stop doubles.
     */
    public Uni<Void> forget(String scope, String key) {
        return records.forget(scope, key).chain(() -> cache.forget(scope, key));
    }

    /** Everything known about one key: the cache, the hot row, the archive; empty when no layer knows it. */
    public Uni<Optional<JsonObject>> trail(String scope, String key) {
        return Uni.combine().all()
                .unis(records.find(scope, key), archive.find(scope, key), cache.peek(scope, key))
                .asTuple()
                .map(found -> {
                    if (found.getItem1().isEmpty() && found.getItem2().isEmpty() && found.getItem3().isEmpty()) {
                        return Optional.empty();
                    }
                    JsonArray archived = new JsonArray();
                    found.getItem2().forEach(a -> archived.add(toJson(a.record())
                            .put("archivedAt", a.archivedAt().toString())));
                    return Optional.of(new JsonObject()
                            .put("scope", scope)
                            .put("key", key)
                            .put("redis", found.getItem3().orElse(null))
                            .put("record", found.getItem1().map(DedupAdmin::toJson).orElse(null))
                            .put("archived", archived));
                });
    }

    private static JsonObject toJson(DedupRecord r) {
        return new JsonObject()
                .put("status", r.status().name())
                .put("fingerprint", r.fingerprint())
                .put("attempts", r.attempts())
                .put("result", r.result())
                .put("traceId", Outcomes.firstTrace(r.result()).orElse(null))
                .put("leaseUntil", r.leaseUntil() == null ? null : r.leaseUntil().toString())
                .put("createdAt", r.createdAt().toString())
                .put("updatedAt", r.updatedAt().toString())
                .put("expiresAt", r.expiresAt().toString());
    }
}
