package dev.idem.ops;

import dev.idem.outbox.OutboxRepository;
import dev.idem.pipeline.DedupAdmin;
import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Moves published outbox events past their retention into the archive table in bounded batches, and
 * audit entries past theirs ({@code idem.admin.audit-retention}; unset, the default: they stay), on
 * the schedule and with the batch sizes with which the pipeline archives its dedup records
 * ({@code idem.pipeline.archive.*}). Idempotent: a second run finds nothing left to move. Each
 * batch is its own statement, so locks are short and other instances may archive at the same time.
 */
@ApplicationScoped
public class Archiver {

    private final Pool pool;
    private final OutboxRepository outbox;
    private final Duration retention;
    private final DedupAdmin dedup;
    private final Clock clock;
    private final AuditTrail audit;
    private final Optional<Duration> auditRetention;

    Archiver(Pool pool, OutboxRepository outbox, OpsConfig ops, DedupAdmin dedup, Clock clock, AuditTrail audit) {
        this.audit = audit;
        this.auditRetention = ops.admin().auditRetention();
        this.pool = pool;
        this.outbox = outbox;
        this.retention = ops.archive().outboxRetention();
        this.dedup = dedup;
        this.clock = clock;
    }

    @Scheduled(every = "${idem.pipeline.archive.interval}", delayed = "1m",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> scheduled() {
        return archiveNow()
                .invoke(events -> {
                    if (events > 0) {
                        Log.infof("Archived %d outbox events", events);
                    }
                })
                .chain(ignored -> archiveAudit())
                .invoke(entries -> {
                    if (entries > 0) {
                        Log.infof("Archived %d audit entries", entries);
                    }
                })
                .onFailure().invoke(failure -> Log.warnf("Archiving failed, the next run retries: %s", failure.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /** How many events moved. */
    public Uni<Integer> archiveNow() {
        Instant before = clock.instant().minus(retention);
        return dedup.archiveInBatches(limit -> outbox.archivePublished(pool, before, limit));
    }

    /** How many audit entries moved to {@code admin_audit_archive}: none without a retention. */
    public Uni<Integer> archiveAudit() {
        if (auditRetention.isEmpty()) {
            return Uni.createFrom().item(0);
        }
        Instant before = clock.instant().minus(auditRetention.get());
        return dedup.archiveInBatches(limit -> audit.archive(before, limit));
    }

}
