package dev.idem.extension.it;

import dev.idem.pipeline.DedupAdmin;
import io.quarkus.scheduler.SkippedExecution;
import io.quarkus.scheduler.SuccessfulExecution;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * What the recovery job did, for {@link JobsAfterStartTest}: each run counted, and a skip while
 * the application starts told to {@link TablesHeldAtStart} (a NOTIFY), which then lets the
 * extension put its tables in place. Quiet unless that resource switched it on.
 */
@ApplicationScoped
class StartSignal {

    static final String CHANNEL = "idem_it_start";
    static final AtomicInteger RECOVERY_RUNS = new AtomicInteger();

    private final Pool pool;
    private final boolean on;

    StartSignal(Pool pool, @ConfigProperty(name = "idem-it.start-signal", defaultValue = "false") boolean on) {
        this.pool = pool;
        this.on = on;
    }

    void skipped(@Observes SkippedExecution skipped) {
        if (on && DedupAdmin.RECOVERY_JOB.equals(skipped.triggerId)) {
            pool.query("NOTIFY " + CHANNEL).execute().subscribe().with(done -> {}, failure -> {});
        }
    }

    void ran(@Observes SuccessfulExecution ran) {
        if (on && DedupAdmin.RECOVERY_JOB.equals(ran.getExecution().getTrigger().getId())) {
            RECOVERY_RUNS.incrementAndGet();
        }
    }
}
