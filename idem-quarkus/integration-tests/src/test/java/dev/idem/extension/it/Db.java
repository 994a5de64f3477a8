package dev.idem.extension.it;

import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Counting in the database after the fact, over the application's pool; tests inject it. */
@Singleton
final class Db {

    private final Pool pool;

    @Inject
    Db(Pool pool) {
        this.pool = pool;
    }

    long count(String sql, Object... params) {
        return rows(sql, params).get(0).getLong(0);
    }

    String string(String sql, Object... params) {
        List<Row> rows = rows(sql, params);
        return rows.isEmpty() ? null : rows.get(0).getString(0);
    }

    List<Row> rows(String sql, Object... params) {
        List<Row> out = new ArrayList<>();
        pool.preparedQuery(sql).execute(Tuple.from(params)).await().atMost(Duration.ofSeconds(30)).forEach(out::add);
        return out;
    }

    long vouchers(String code) {
        return count("SELECT count(*) FROM vouchers WHERE code = $1", code);
    }

    long entries(String account) {
        return count("SELECT count(*) FROM ledger WHERE account = $1", account);
    }

    long records(String scope, String key) {
        return count("SELECT count(*) FROM dedup_record WHERE scope = $1 AND key = $2", scope, key);
    }

    /** What archiving does to a record past its retention: the hot table forgets the key. */
    void forgetRecord(String scope, String key) {
        rows("DELETE FROM dedup_record WHERE scope = $1 AND key = $2", scope, key);
    }
}
