package dev.idem.payments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testing.Db;
import dev.idem.testing.Metrics;
import dev.idem.testing.Storm;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The incident that started it all: one payment notified six times must pay once and grant once. */
@QuarkusTest
class IncidentStormTest {

    static final int ORDERS = 200;
    static final int COPIES = 6;
    static final Map<String, String> CALLBACKS = Map.of("scope", PaymentService.SCOPE);

    @Inject
    Pool pool;

    @Inject
    RedisDataSource redis;

    @Test
    void sixConcurrentDeliveriesOfEachPaymentPayOnceAndWriteOneGrant() {
        Storm storm = new Storm(new Db(pool)).createOrders(ORDERS);
        Metrics before = Metrics.scrape();

        storm.deliver(COPIES, 64, null);
        Metrics after = Metrics.scrape();

        storm.assertPaidOnceWithOneCoupon();
        assertOutcomesCounted(before, after);
        long byRedis = after.delta(before, "idem_pipeline_duplicates_total", with("layer", "redis"));
        assertTrue(byRedis > 0, "most duplicates stop at Redis once the first delivery committed");
        assertLoopPoolsCarriedRedis(before, after);
    }

    @Test
    void redisFlushedInTheMiddleOfTheStormChangesNothing() {
        Storm storm = new Storm(new Db(pool)).createOrders(ORDERS);
        Metrics before = Metrics.scrape();
        AtomicBoolean flushed = new AtomicBoolean();

        storm.deliver(COPIES, 64, () -> {
            redis.execute("FLUSHDB");
            flushed.set(true);
        });

        Metrics after = Metrics.scrape();
        assertTrue(flushed.get());
        storm.assertPaidOnceWithOneCoupon();
        assertOutcomesCounted(before, after);
    }

    /**
     * One PROCESSED per order and every other delivery a DUPLICATE, each counted by the layer
     * that caught it. The counters are per scope, not per test: a payment that reaches the same
     * scope by Kafka meanwhile also counts, hence "at least" for the totals and exact equality
     * between the duplicate outcomes and their layers.
     */
    static void assertOutcomesCounted(Metrics before, Metrics after) {
        long processed = after.delta(before, "idem_pipeline_outcomes_total", with("outcome", "PROCESSED"));
        long duplicates = after.delta(before, "idem_pipeline_outcomes_total", with("outcome", "DUPLICATE"));
        assertTrue(processed >= ORDERS, "processed " + processed);
        assertTrue(duplicates >= (long) ORDERS * (COPIES - 1), "duplicates " + duplicates);
        assertEquals(duplicates, after.delta(before, "idem_pipeline_duplicates_total", CALLBACKS),
                "every duplicate is counted by the layer that caught it");
    }

    /**
     * The event loops' own Redis pools, which carry a request's Redis commands, are reported
     * each under its own name, and their metrics count the storm's commands.
     */
    static void assertLoopPoolsCarriedRedis(Metrics before, Metrics after) {
        Set<String> loopPools = after.tagValues("redis_pool_idle", "pool_name").stream()
                .filter(name -> name.contains("@vert.x-eventloop-thread-"))
                .collect(Collectors.toSet());
        assertFalse(loopPools.isEmpty(), "pools reported: " + after.tagValues("redis_pool_idle", "pool_name"));
        long leases = loopPools.stream()
                .mapToLong(name -> after.delta(before, "redis_pool_usage_seconds_count", Map.of("pool_name", name)))
                .sum();
        assertTrue(leases >= ORDERS, "Redis commands on the loops' pools: " + leases);
    }

    static Map<String, String> with(String tag, String value) {
        return Map.of("scope", PaymentService.SCOPE, tag, value);
    }
}
