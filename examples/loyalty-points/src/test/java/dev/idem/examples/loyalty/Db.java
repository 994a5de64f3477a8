package dev.idem.examples.loyalty;

import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Counting in the database after the fact, over the service's pool; tests inject it. */
@Singleton
final class Db {

    @Inject
    Pool pool;

    long count(String sql, Object... params) {
        return rows(sql, params).get(0).getLong(0);
    }

    List<Row> rows(String sql, Object... params) {
        List<Row> out = new ArrayList<>();
        pool.preparedQuery(sql).execute(Tuple.from(params)).await().atMost(Duration.ofSeconds(30)).forEach(out::add);
        return out;
    }

    long awards(String awardKey) {
        return count("SELECT count(*) FROM points_award WHERE award_key = $1", awardKey);
    }

    long balance(String userId) {
        List<Row> rows = rows("SELECT points FROM points_balance WHERE user_id = $1", userId);
        return rows.isEmpty() ? 0 : rows.get(0).getLong(0);
    }
}
