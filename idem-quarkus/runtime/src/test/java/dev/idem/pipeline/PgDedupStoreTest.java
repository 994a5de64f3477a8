package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.DedupStore.Ending;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The store contract of {@link PgDedupStore}, on the Postgres server of {@code ./idem services} in a
 * database of its own ({@value #DATABASE}, which {@code ./idem services test-dbs} makes afresh),
 * with the pipeline's tables as its migration creates them.
 */
class PgDedupStoreTest extends DedupStoreContract {

    static final String DATABASE = "idem_store_test";
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    private static Vertx vertx;
    private static Pool pool;
    private static Pool nowhere;

    @BeforeAll
    static void connect() throws IOException {
        vertx = Vertx.vertx();
        pool = pool(5432, 4);
        try {
            // the migration, as the extension runs it (one transaction: its SET LOCAL needs one)
            pool.query("BEGIN;\n" + migration() + "\nCOMMIT;").execute().await().atMost(PATIENCE);
        } catch (RuntimeException unreachable) {
            throw new IllegalStateException("database " + DATABASE + " on 127.0.0.1:5432 as idem (./idem services "
                    + "test-dbs makes it): " + unreachable.getMessage(), unreachable);
        }
        pool.query("CREATE TABLE IF NOT EXISTS contract_row (name text PRIMARY KEY)").execute().await().atMost(PATIENCE);
        nowhere = pool(1, 1);
    }

    @AfterAll
    static void close() {
        pool.close().await().atMost(PATIENCE);
        nowhere.close().await().atMost(PATIENCE);
        vertx.close().await().atMost(PATIENCE);
    }

    private static Pool pool(int port, int size) {
        PgConnectOptions options = new PgConnectOptions().setHost("127.0.0.1").setPort(port).setDatabase(DATABASE)
                .setUser("idem").setPassword("idem").setConnectTimeout(2000)
                .setCachePreparedStatements(true); // as Quarkus has it for Postgres: no Parse round trip per statement
        return Pool.newInstance(PgBuilder.pool().with(new PoolOptions().setMaxSize(size)).connectingTo(options)
                .using(vertx.getDelegate()).build());
    }

    @Test
    void aWorkStatementThatFailsAheadOfTheRecordsAndCommitLeavesNothingAndTheConnectionUsable() {
        // a work's statement fails, its record and the COMMIT pipelined behind it: the COMMIT ends the aborted transaction
        RuntimeException failed = assertThrows(RuntimeException.class, () -> store.transaction(UNBOUNDED,
                tx -> Uni.combine().all().unis(insertRow(tx, "row-1"), tx.query("SELECT 1 / 0").execute(),
                        recordAndCommit(tx, A)).asTuple(), all -> Ending.ENDED).await().atMost(PATIENCE));

        // the work's own failure (22012), not what the statements behind it met (25P02)
        assertEquals(DedupStore.Failure.INVALID_DATA, store.classify(failed));
        assertEquals(Map.of(), committed(A));
        assertEquals(Set.of(), rows());
        assertTrue(inTx(tx -> store.recordAll(tx, List.of(B), List.of("{}"), Instant.now(), List.of(Instant.now().plusSeconds(60))))
                .contains(DedupStore.batchKey(B)), "the connection went back to the pool usable");
    }

    @Test
    void aTransactionsStatementsSentWithoutWaitingLeaveInOneWrite() throws IOException {
        try (CountingRelay relay = new CountingRelay(5432)) {
            Pool through = pool(relay.port(), 1);
            try {
                store = new PgDedupStore(through, Clock.systemUTC());
                // connects, and the statements meet the server once
                ended(tx -> Uni.combine().all().unis(insertRow(tx, "row-0"), recordAndCommit(tx, A)).asTuple());
                long before = relay.reads();

                // BEGIN, the row, its record and the COMMIT: the client flushes after each; OneFlush makes those one write
                ended(tx -> Uni.combine().all().unis(insertRow(tx, "row-1"), recordAndCommit(tx, B)).asTuple());

                assertEquals(1, relay.reads() - before, "writes to Postgres for one transaction");
                assertEquals(Map.of(key(A), done(A), key(B), done(B)), committed(A, B));
                assertEquals(Set.of("row-0", "row-1"), rows());
            } finally {
                through.close().await().atMost(PATIENCE);
            }
        }
    }

    private static String migration() throws IOException {
        try (InputStream in = PgDedupStoreTest.class.getResourceAsStream("/db/idem/R__idem_pipeline_tables.sql")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Override
    DedupStore emptyStore() {
        pool.query("TRUNCATE dedup_record, contract_row").execute().await().atMost(PATIENCE);
        return new PgDedupStore(pool, Clock.systemUTC());
    }

    @Override
    DedupStore unreachable() {
        return new PgDedupStore(nowhere, Clock.systemUTC());
    }

    @Override
    Uni<Void> insertRow(SqlConnection tx, String name) {
        return tx.preparedQuery("INSERT INTO contract_row (name) VALUES ($1)").execute(Tuple.of(name)).replaceWithVoid();
    }

    @Override
    Set<String> rows() {
        Set<String> names = new HashSet<>();
        for (Row row : pool.query("SELECT name FROM contract_row").execute().await().atMost(PATIENCE)) {
            names.add(row.getString("name"));
        }
        return names;
    }

    @Override
    boolean aStatementWaits() {
        return pool.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        + " AND wait_event_type = 'Lock'").execute().await().atMost(PATIENCE)
                .iterator().next().getLong(0) > 0;
    }
}
