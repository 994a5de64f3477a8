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
        return connect(settings.jdbcUrl(), settings.jdbcUser(), settings.jdbcPassword());
    }

    static Connection connect(String url, String user, String password) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", user);
        props.setProperty("password", password);
        props.setProperty("ApplicationName", "idem-bench");
        return DriverManager.getConnection(url, props);
    }

    /**
     * ANALYZE of the service's tables, as soon as a warm-up has put rows in them: what autovacuum
     * does on a default server. Without it, statistics taken while the tables were empty stay in
     * place on a server without autovacuum, and Postgres keeps plans made for an empty table (the
     * completion's UPDATE of a dedup record then scans the whole table).
     */
    static void analyze(Settings settings) {
        analyze(settings.jdbcUrl(), settings.jdbcUser(), settings.jdbcPassword(),
                "ANALYZE dedup_record, orders, outbox_event, coupons, payment_anomaly");
    }

    /** {@code statement} (an ANALYZE) as that user; a comparison's fresh database gets a bare ANALYZE, as its owner. */
    static void analyze(String url, String user, String password, String statement) {
        long start = System.nanoTime();
        try (Connection db = connect(url, user, password); Statement sql = db.createStatement()) {
            sql.execute(statement);
            Progress.say(String.format("analyzed %s (%.1f s)", url.substring(url.lastIndexOf('/') + 1),
                    (System.nanoTime() - start) / 1e9));
        } catch (SQLException e) {
            Progress.say("warning: ANALYZE failed: " + e.getMessage());
        }
    }
}
