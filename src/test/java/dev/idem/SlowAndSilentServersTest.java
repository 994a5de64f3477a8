package dev.idem;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.payments.PaymentService;
import dev.idem.testing.Db;
import dev.idem.testing.Metrics;
import dev.idem.testing.PostgresBehindProxy;
import dev.idem.testing.RedisBehindProxy;
import dev.idem.testing.Storm;
import dev.idem.testing.TcpProxy;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Outages that are neither clean nor quick: Postgres answering slower, Postgres and Redis silent
 * (packets held: no answer, no reset) in the middle of a storm. Every delivery is still answered
 * SUCCESS once, and the accounts are exact. The long versions run in {@code ./idem chaos}.
 */
@QuarkusTest
@WithTestResource(PostgresBehindProxy.class)
@WithTestResource(RedisBehindProxy.class)
class SlowAndSilentServersTest {

    static final int ORDERS = 60;
    static final Duration SILENCE = Duration.ofSeconds(5);

    @Inject
    Pool pool;

    private final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void serversBack() throws IOException {
        later.shutdownNow();
        PostgresBehindProxy.proxy().restore();
        RedisBehindProxy.proxy().restore();
    }

    @Test
    void postgresAnswering200msSlowerInTheMiddleOfAStormChangesNoAccount() {
        Storm storm = new Storm(new Db(pool)).createOrders(ORDERS);

        storm.deliver(6, 32, () -> PostgresBehindProxy.proxy().slow(Duration.ofMillis(200)));

        storm.assertPaidExactlyOnce();
        storm.assertOneCouponPerOrder();
    }

    @Test
    void postgresSilentForFiveSecondsIsWaitedOutAndChangesNoAccount() {
        Storm storm = new Storm(new Db(pool)).createOrders(ORDERS);

        storm.deliver(6, 32, () -> silence(PostgresBehindProxy.proxy()));

        storm.assertPaidExactlyOnce();
        storm.assertOneCouponPerOrder();
    }

    @Test
    void redisSilentForFiveSecondsIsSkippedAndChangesNoAccount() {
        Storm storm = new Storm(new Db(pool)).createOrders(ORDERS);
        Metrics before = Metrics.scrape();

        storm.deliver(6, 32, () -> silence(RedisBehindProxy.proxy()));

        storm.assertPaidExactlyOnce();
        storm.assertOneCouponPerOrder();
        assertTrue(Metrics.scrape().delta(before, "idem_redis_degraded_total", Map.of("scope", PaymentService.SCOPE)) > 0,
                "pre-checks past their budget were skipped and counted");
    }

    /** Blackholed now, restored {@link #SILENCE} later, while the storm goes on. */
    private void silence(TcpProxy proxy) {
        proxy.blackhole();
        later.schedule(() -> {
            try {
                proxy.restore();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, SILENCE.toMillis(), TimeUnit.MILLISECONDS);
    }
}
