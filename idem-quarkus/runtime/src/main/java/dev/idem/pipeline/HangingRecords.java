package dev.idem.pipeline;

import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Nothing hangs forever: two-phase records still PROCESSING after their lease (their holder
 * crashed, hung, or its attempt failed) are taken over by compare-and-set on the lease and their
 * effect is run again, or they are marked FAILED once they had {@code idem.pipeline.max-attempts}.
 * A scheduled job does it every {@code idem.pipeline.recovery-interval}; operators do it now with
 * {@link DedupAdmin#redriveHanging()}. Several instances may run it at once: each record goes to one.
 */
@ApplicationScoped
class HangingRecords {

    private static final Logger LOG = Logger.getLogger(HangingRecords.class);

    private final TwoPhase twoPhase;
    private final DedupRecords records;
    private final PipelineConfig config;
    private final Clock clock;

    HangingRecords(TwoPhase twoPhase, DedupRecords records, PipelineConfig config, Clock clock) {
        this.twoPhase = twoPhase;
        this.records = records;
        this.config = config;
        this.clock = clock;
    }

    /**
     * One scheduled run, every {@code idem.pipeline.recovery-interval} ({@code off}: only when an
     * operator asks): what it did is logged, a failure waits for the next run, and a run still
     * going when the next is due is not doubled. None before start-up is over: the scheduler
     * starts before the tables are put in place or migrated.
     */
    @Scheduled(identity = DedupAdmin.RECOVERY_JOB, every = "${idem.pipeline.recovery-interval}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> recover() {
        return redriveHanging()
                .invoke(report -> {
                    if (report.examined() > 0) {
                        LOG.infof("Recovery of hanging records: %s", report.toJson().encode());
                    }
                })
                .onFailure().invoke(failure -> LOG.warnf("Recovery of hanging records failed, the next run "
                        + "tries again: %s", failure.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /**
     * A FAILED record run again, with all its attempts, as recovery runs a hanging one; empty when
     * the key has no FAILED two-phase record.
     */
    Uni<Optional<Resumption>> redriveFailed(String scope, String key) {
        return records.reopen(scope, key, clock.instant()).chain(reopened -> reopened.isEmpty()
                ? Uni.createFrom().item(Optional.<Resumption>empty())
                : twoPhase.resume(reopened.get()).map(Optional::of));
    }

    /**
     * Takes over the records hanging now, the longest-hanging first, at most
     * {@code idem.pipeline.recovery-batch-size} of them.
     */
    Uni<DedupAdmin.RedriveReport> redriveHanging() {
        return records.hanging(clock.instant(), config.recoveryBatchSize())
                .onItem().transformToMulti(records -> Multi.createFrom().iterable(records))
                .onItem().transformToUni(record -> twoPhase.resume(record)
                        .onFailure().recoverWithItem(failure -> {
                            LOG.warnf("%s %s: recovery failed, the next run tries again: %s", record.scope(),
                                    record.key(), failure.toString());
                            return Resumption.LOST;
                        }))
                .merge(config.recoveryConcurrency())
                .collect().asList()
                .map(DedupAdmin.RedriveReport::of);
    }
}
