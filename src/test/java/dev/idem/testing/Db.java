package dev.idem.testing;

import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Counting in the database after the fact: the test's own reads over the service's pool. A test of
 * the service injects it; a test that runs the service apart makes one over a pool of its own.
 */
@Singleton
public final class Db {

    private final Pool pool;

    @Inject
    public Db(Pool pool) {
        this.pool = pool;
    }

    public long count(String sql, Object... params) {
        Row row = rows(sql, params).get(0);
        return row.getLong(0);
    }

    public String string(String sql, Object... params) {
        List<Row> rows = rows(sql, params);
        return rows.isEmpty() ? null : rows.get(0).getString(0);
    }

    public List<Row> rows(String sql, Object... params) {
        List<Row> out = new ArrayList<>();
        pool.preparedQuery(sql).execute(Tuple.from(params)).await().atMost(Duration.ofSeconds(30)).forEach(out::add);
        return out;
    }
}
