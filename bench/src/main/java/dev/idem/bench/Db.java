package dev.idem.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/** The load generator's own JDBC connection to the service's database: counting, and statistics. */
final class Db {

    private Db() {}

    static Connection connect(Settings settings) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", settings.jdbcUser());
        props.setProperty("password", settings.jdbcPassword());
        props.setProperty("ApplicationName", "idem-bench");
        return DriverManager.getConnection(settings.jdbcUrl(), props);
    }

    /**
     * ANALYZE of the service's tables, as soon as a warm-up has put rows in them and again as they
     * grow: what autovacuum does on a default server. Without it, statistics taken while the
     * tables were empty stay in place on a server without autovacuum, and Postgres keeps plans
     * made for an empty table: the completion's UPDATE of a dedup record then scans the whole
     * table, and a warm-up round times those scans instead of warming the service.
     */
    static void analyze(Settings settings, String after) {
        long start = System.nanoTime();
        try (Connection db = connect(settings); Statement sql = db.createStatement()) {
            sql.execute("ANALYZE dedup_record, orders, outbox_event, coupons, payment_anomaly");
            Progress.say(String.format("analyzed the service's tables after %s (%.1f s)", after,
                    (System.nanoTime() - start) / 1e9));
        } catch (SQLException e) {
            Progress.say("warning: ANALYZE after " + after + " failed: " + e.getMessage());
        }
    }
}
