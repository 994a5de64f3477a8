package dev.idem.it;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The operator's view of the shared database, over plain JDBC: a connection per question, so a
 * count can be polled from any thread. A {@link Collection} parameter is bound as a text array
 * (for {@code = ANY(?)}).
 */
final class Jdbc {

    private final String url;
    private final String user;
    private final String password;

    Jdbc(String url, String user, String password) {
        this.url = url;
        this.user = user;
        this.password = password;
    }

    long count(String sql, Object... params) {
        return Long.parseLong(strings(sql, params).get(0));
    }

    /** Statements with no result (DDL among them), in one autocommitted batch. */
    void execute(String... statements) {
        try (Connection connection = DriverManager.getConnection(url, user, password);
             var statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.addBatch(sql);
            }
            statement.executeBatch();
        } catch (SQLException e) {
            throw new IllegalStateException("statements failed: " + String.join("; ", statements), e);
        }
    }

    /** The first column of every row, as text. */
    List<String> strings(String sql, Object... params) {
        try (Connection connection = DriverManager.getConnection(url, user, password);
             PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                Object param = params[i];
                statement.setObject(i + 1, param instanceof Collection<?> values
                        ? connection.createArrayOf("text", values.toArray())
                        : param);
            }
            List<String> out = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    out.add(rows.getString(1));
                }
            }
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException("query failed: " + sql, e);
        }
    }
}
