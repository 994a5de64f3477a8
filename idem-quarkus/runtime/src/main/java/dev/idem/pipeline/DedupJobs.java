package dev.idem.pipeline;

import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled.ConcurrentExecution;
import io.quarkus.scheduler.Scheduler;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.function.Supplier;

/**
 * The pipeline's two schedules, as configured: recovery of hanging records every
 * {@code idem.pipeline.recovery-interval} and archiving every {@code idem.pipeline.archive.interval}
 * ({@code off}: only when an operator asks, through {@link DedupAdmin}). A run still going when the
 * next one is due is not doubled.
 */
@ApplicationScoped
class DedupJobs {

    void schedule(@Observes StartupEvent start, Scheduler scheduler, PipelineConfig config, HangingRecords hanging,
                  DedupArchive archive) {
        every(scheduler, DedupAdmin.RECOVERY_JOB, config.recoveryInterval(), null, hanging::recover);
        // archiving is no hurry: the first run waits until start-up's traffic has passed
        every(scheduler, DedupAdmin.ARCHIVE_JOB, config.archive().interval(), "1m", archive::scheduled);
    }

    private static void every(Scheduler scheduler, String identity, String interval, String delay,
                              Supplier<Uni<Void>> run) {
        if ("off".equals(interval)) {
            return;
        }
        Scheduler.JobDefinition<?> job = scheduler.newJob(identity)
                .setInterval(interval)
                .setConcurrentExecution(ConcurrentExecution.SKIP);
        if (delay != null) {
            job.setDelayed(delay);
        }
        job.setAsyncTask(execution -> run.get()).schedule();
    }
}
