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
     * ANALYZE of the service's tables, once a warm-up has filled them: what autovacuum does on a
     * default server as a table grows. Without it, statistics taken while the tables were empty
     * stay in place on a server without autovacuum, and Postgres keeps plans made for an empty
     * table: the completion's UPDATE of a dedup record then scans the whole table.
     */
    static void analyze(Settings settings) {
        long start = System.nanoTime();
        try (Connection db = connect(settings); Statement sql = db.createStatement()) {
            sql.execute("ANALYZE dedup_record, orders, outbox_event, coupons, payment_anomaly");
            Progress.say(String.format("analyzed the service's tables after the warm-up (%.1f s)",
                    (System.nanoTime() - start) / 1e9));
        } catch (SQLException e) {
            Progress.say("warning: ANALYZE after the warm-up failed: " + e.getMessage());
        }
    }
}
