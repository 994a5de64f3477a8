package dev.idem.ops;

import dev.idem.outbox.OutboxRepository;
import dev.idem.pipeline.DedupArchive;
import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Instant;
import java.util.function.Function;

/**
 * Moves dedup records past their retention, and published outbox events past theirs, into the
 * archive tables in bounded batches. Idempotent: a second run finds nothing left to move. Each
 * batch is its own statement, so locks are short and other instances may archive at the same time.
 */
@ApplicationScoped
public class Archiver {

    public record Report(int dedupRecords, int outboxEvents) {}

    private final Pool pool;
    private final DedupArchive dedup;
    private final OutboxRepository outbox;
    private final ArchiveConfig config;
    private final Clock clock;

    Archiver(Pool pool, DedupArchive dedup, OutboxRepository outbox, ArchiveConfig config, Clock clock) {
        this.pool = pool;
        this.dedup = dedup;
        this.outbox = outbox;
        this.config = config;
        this.clock = clock;
    }

    @Scheduled(every = "${idem.archive.interval:10m}", delayed = "1m",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return archiveNow()
                .invoke(report -> {
                    if (report.dedupRecords() + report.outboxEvents() > 0) {
                        Log.infof("Archived %d dedup records and %d outbox events", report.dedupRecords(), report.outboxEvents());
                    }
                })
                .onFailure().invoke(failure -> Log.warnf("Archiving failed, the next run retries: %s", failure.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    public Uni<Report> archiveNow() {
        Instant now = clock.instant();
        return drain(limit -> dedup.moveExpired(pool, now, limit), 0, 0)
                .chain(records -> drain(limit -> outbox.archivePublished(pool, now.minus(config.outboxRetention()), limit), 0, 0)
                        .map(events -> new Report(records, events)));
    }

    /** Runs batches until one comes back short (nothing left) or the run's bound is reached. */
    private Uni<Integer> drain(Function<Integer, Uni<Integer>> batch, int moved, int batches) {
        if (batches >= config.maxBatches()) {
            return Uni.createFrom().item(moved);
        }
        return batch.apply(config.batchSize()).chain(count -> count < config.batchSize()
                ? Uni.createFrom().item(moved + count)
                : drain(batch, moved + count, batches + 1));
    }
}
