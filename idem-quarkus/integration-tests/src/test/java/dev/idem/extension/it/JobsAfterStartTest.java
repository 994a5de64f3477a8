package dev.idem.extension.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * On a database that does not have the pipeline's tables yet, the scheduler starts before the
 * extension puts them in place. The recovery job must wait for start-up to end instead of failing
 * against tables that are not there, and warning about it in the service's log.
 */
@QuarkusTest
@QuarkusTestResource(value = TablesHeldAtStart.class, restrictToAnnotatedClass = true)
class JobsAfterStartTest {

    @Inject
    Pool pool;

    @Test
    void theRecoveryJobWaitsForTheTablesAndThenRuns() {
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> StartSignal.RECOVERY_RUNS.get() > 0);

        assertEquals(List.of(), TablesHeldAtStart.WARNINGS.stream().distinct().toList());
        assertEquals(1L, new Db(pool).count("SELECT count(*) FROM pg_tables WHERE tablename = 'dedup_record'"));
    }
}
