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
     * ANALYZE of the service's tables, as soon as a warm-up has put rows in them and again as they
     * grow: what autovacuum does on a default server. Without it, statistics taken while the
     * tables were empty stay in place on a server without autovacuum, and Postgres keeps plans
     * made for an empty table: the completion's UPDATE of a dedup record then scans the whole
     * table, and a warm-up round times those scans instead of warming the service.
     */
    static void analyze(Settings settings, String after) {
        analyze(() -> connect(settings), "ANALYZE dedup_record, orders, outbox_event, coupons, payment_anomaly",
                "the service's tables after " + after);
    }

    /**
     * ANALYZE of every table of a database, as its owner: a comparison's fresh database after the
     * warm-up, whatever tables the service there made, for the reason above; each service of a
     * comparison gets it at the same point.
     */
    static void analyzeAll(String url, String user, String password, String after) {
        analyze(() -> connect(url, user, password), "ANALYZE", "the database after " + after);
    }

    private interface Connector {
        Connection open() throws SQLException;
    }

    private static void analyze(Connector connector, String statement, String what) {
        long start = System.nanoTime();
        try (Connection db = connector.open(); Statement sql = db.createStatement()) {
            sql.execute(statement);
            Progress.say(String.format("analyzed %s (%.1f s)", what, (System.nanoTime() - start) / 1e9));
        } catch (SQLException e) {
            Progress.say("warning: ANALYZE of " + what + " failed: " + e.getMessage());
        }
    }
}
