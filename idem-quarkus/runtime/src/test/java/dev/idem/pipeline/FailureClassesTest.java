package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.VertxException;
import io.vertx.pgclient.PgException;
import java.io.IOException;
import java.time.Clock;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * What Postgres's answers mean for a delivery: a store that failed over is retried for as long as
 * it takes (a Kafka record is never dead-lettered for it), a delivery's own bad data is refused.
 */
class FailureClassesTest {

    private final DedupStore store = new PgDedupStore(null, Clock.systemUTC());

    private static PgException pg(String sqlState) {
        return new PgException("answer " + sqlState, "ERROR", sqlState, null);
    }

    @Test
    void aFailoverIsTheStoreUnavailable() {
        // 25006: a write on a standby, or on a primary demoted under its connections
        for (String state : new String[] {"25006", "57P01", "57P03", "08006", "53300"}) {
            assertEquals(DedupStore.Failure.UNAVAILABLE, store.classify(pg(state)), state);
        }
        assertEquals(DedupStore.Failure.UNAVAILABLE, store.classify(new VertxException("Connection closed", true)));
        assertEquals(DedupStore.Failure.UNAVAILABLE, store.classify(new IOException("reset by peer")));
        assertEquals(DedupStore.Failure.UNAVAILABLE, store.classify(new TimeoutException()));
    }

    @Test
    void aDeliverysOwnStatementIsNot() {
        assertEquals(DedupStore.Failure.INVALID_DATA, store.classify(pg("22P05")));
        assertEquals(DedupStore.Failure.INVALID_DATA, store.classify(pg("23502")));
        assertEquals(DedupStore.Failure.UNIQUE_VIOLATION, store.classify(pg("23505")));
        assertEquals(DedupStore.Failure.LOCK_NOT_AVAILABLE, store.classify(pg("55P03")));
        // another transaction state than read-only is the statement's
        assertEquals(DedupStore.Failure.OTHER, store.classify(pg("25P02")));
        assertEquals(DedupStore.Failure.OTHER, store.classify(pg("42P01")));
    }
}
