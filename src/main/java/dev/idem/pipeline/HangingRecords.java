package dev.idem.pipeline;

import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;

/**
 * Nothing hangs forever: two-phase records still PROCESSING after their lease (their holder
 * crashed, hung, or its attempt failed) are taken over by compare-and-set on the lease and their
 * effect is run again, or they are marked FAILED once they had {@code idem.pipeline.max-attempts}.
 * A scheduled job does it every {@code idem.pipeline.recovery-interval}; operators do it now with
 * {@link #redriveHanging()}. Several instances may run it at once: each record goes to one.
 */
@ApplicationScoped
public class HangingRecords {

    /** The scheduler identity of the recovery job. */
    public static final String JOB = "dedup-recovery";

    private final IdempotencyPipeline pipeline;
    private final DedupStore store;
    private final Pool pool;
    private final TwoPhaseConfig config;
    private final Clock clock;

    HangingRecords(IdempotencyPipeline pipeline, DedupStore store, Pool pool, TwoPhaseConfig config, Clock clock) {
        this.pipeline = pipeline;
        this.store = store;
        this.pool = pool;
        this.config = config;
        this.clock = clock;
    }

    @Scheduled(identity = JOB, every = "${idem.pipeline.recovery-interval:10s}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> recover() {
        return redriveHanging()
                .invoke(report -> {
                    if (report.examined() > 0) {
                        Log.infof("Recovery of hanging records: %s", report.toJson().encode());
                    }
                })
                .onFailure().invoke(failure -> Log.warnf("Recovery of hanging records failed, the next run "
                        + "tries again: %s", failure.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /**
     * Takes over the records hanging now, the longest-hanging first, at most
     * {@code idem.pipeline.recovery-batch-size} of them; what {@code POST /admin/dedup/redrive} runs.
     */
    public Uni<RedriveReport> redriveHanging() {
        return store.hanging(pool, clock.instant(), config.recoveryBatchSize())
                .onItem().transformToMulti(records -> Multi.createFrom().iterable(records))
                .onItem().transformToUni(record -> pipeline.resume(record)
                        .onFailure().recoverWithItem(failure -> {
                            Log.warnf("%s %s: recovery failed, the next run tries again: %s", record.scope(),
                                    record.key(), failure.toString());
                            return Resumption.LOST;
                        }))
                .merge(config.recoveryConcurrency())
                .collect().asList()
                .map(RedriveReport::of);
    }
}
