package dev.idem.extension.it;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.postgresql.PGConnection;

/**
 * A database without the pipeline's tables, whose creation at start-up is held back: this holds
 * the advisory lock the extension takes around its script until the recovery job, which the
 * scheduler started before, has come due and been skipped ({@link StartSignal}), or a minute passed.
 * Meanwhile it keeps what the extension logs at WARNING and above.
 */
public class TablesHeldAtStart implements QuarkusTestResourceLifecycleManager {

    static final String DB = "idem_extension_start_test";
    /** The extension's lock around its script ("idem" in ASCII). */
    private static final long LOCK = 0x6964656dL;
    private static final int PATIENCE_MS = 60_000;

    /** What {@code dev.idem} logged at WARNING and above while the application ran. */
    static final List<String> WARNINGS = new CopyOnWriteArrayList<>();

    private final Logger idem = Logger.getLogger("dev.idem");
    private final Handler warnings = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                WARNINGS.add(record.getLoggerName() + ": " + record.getMessage()
                        + (record.getParameters() == null ? "" : " " + List.of(record.getParameters())));
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };
    private Connection holder;

    @Override
    public Map<String, String> start() {
        idem.addHandler(warnings);
        try {
            holder = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/" + DB, "idem", "idem");
            try (Statement sql = holder.createStatement()) {
                sql.execute("DROP TABLE IF EXISTS dedup_record, dedup_record_archive");
                sql.execute("LISTEN " + StartSignal.CHANNEL);
                sql.execute("SELECT pg_advisory_lock(" + LOCK + ")");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("database " + DB + " (./idem services test-dbs makes it): " + e.getMessage(), e);
        }
        Thread release = new Thread(this::releaseWhenSkipped, "tables-held-at-start");
        release.setDaemon(true);
        release.start();
        return Map.of("quarkus.datasource.reactive.url", "postgresql://127.0.0.1:5432/" + DB,
                "idem.pipeline.recovery-interval", "1s",
                "idem-it.start-signal", "true");
    }

    private void releaseWhenSkipped() {
        try {
            holder.unwrap(PGConnection.class).getNotifications(PATIENCE_MS);
            try (Statement sql = holder.createStatement()) {
                sql.execute("SELECT pg_advisory_unlock(" + LOCK + ")");
            }
        } catch (SQLException closed) {
            // stop() closed the connection, which releases the lock too
        }
    }

    @Override
    public void stop() {
        idem.removeHandler(warnings);
        try {
            holder.close();
        } catch (SQLException ignored) {
            // closing: nothing left to release
        }
    }
}
