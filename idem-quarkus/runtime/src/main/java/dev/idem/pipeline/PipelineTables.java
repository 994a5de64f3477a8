package dev.idem.pipeline;

import io.quarkus.runtime.StartupEvent;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.jboss.logging.Logger;

/**
 * The pipeline's tables, put in place at start-up through the reactive pool, so that a service
 * needs neither Flyway nor a JDBC driver for them. The script creates only what is missing, and
 * an advisory lock keeps two instances starting together from racing. Skipped when the service's
 * own Flyway reads the script's location ({@code db/idem}), or when
 * {@code idem.pipeline.create-tables=false}.
 */
@ApplicationScoped
class PipelineTables {

    static final String SCRIPT = "db/idem/R__idem_pipeline_tables.sql";

    private static final Logger LOG = Logger.getLogger(PipelineTables.class);
    /** The advisory lock every instance takes around the script ("idem" in ASCII). */
    private static final long LOCK = 0x6964656dL;
    private static final Duration PATIENCE = Duration.ofMinutes(1);

    /** Before anything else starts, the Kafka consumers included: their first record needs the tables. */
    void create(@Observes @Priority(1) StartupEvent start, PipelineConfig config, Pool pool) {
        if (!config.createTables().orElse(true)) {
            return;
        }
        String script = script();
        // the main thread, at start-up: waiting here is what a migration at start does too
        pool.withTransaction(tx -> tx.preparedQuery("SELECT pg_advisory_xact_lock($1)").execute(Tuple.of(LOCK))
                        .chain(() -> tx.query(script).execute()))
                .onFailure().transform(failure -> new IllegalStateException("The idempotency pipeline could not put its "
                        + "tables in place (" + SCRIPT + "): " + failure.getMessage() + ". Check quarkus.datasource.*, "
                        + "or create them yourself from that script and set idem.pipeline.create-tables=false.", failure))
                .await().atMost(PATIENCE);
        LOG.debugf("the pipeline's tables are in place (%s)", SCRIPT);
    }

    private static String script() {
        try (InputStream in = PipelineTables.class.getClassLoader().getResourceAsStream(SCRIPT)) {
            if (in == null) {
                throw new IllegalStateException(SCRIPT + " is missing from the idem-quarkus jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
