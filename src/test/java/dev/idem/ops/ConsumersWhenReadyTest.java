package dev.idem.ops;

import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Db;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.reactive.messaging.ChannelRegistry;
import io.smallrye.reactive.messaging.PausableChannel;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import org.junit.jupiter.api.Test;

/** An instance that is not ready takes no records; the records wait in Kafka until it is. */
@QuarkusTest
@TestProfile(ConsumersWhenReadyTest.HeldDown.class)
class ConsumersWhenReadyTest {

    static final List<String> CONSUMERS = List.of("payment-callbacks", "coupon-grants");

    /** A readiness check DOWN from the start until the test says otherwise. */
    @Alternative
    @Readiness
    @ApplicationScoped
    public static class HeldReadiness implements HealthCheck {
        static final AtomicBoolean UP = new AtomicBoolean();
        static final AtomicInteger CALLS = new AtomicInteger();

        @Override
        public HealthCheckResponse call() {
            CALLS.incrementAndGet();
            return HealthCheckResponse.named("held for the test").status(UP.get()).build();
        }
    }

    public static class HeldDown implements QuarkusTestProfile {
        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(HeldReadiness.class);
        }
    }

    @Inject
    ChannelRegistry channels;

    @Inject
    Pool pool;

    @Test
    void consumersStartOnceReadyAndTakeWhatWaited() {
        Db db = new Db(pool);
        String order = newOrder("when-ready-" + UUID.randomUUID(), 1999);
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            kafka.send("payment-callbacks", null, "T-" + order, callback("T-" + order, order, 1999, "SUCCESS"));

            // readiness asked again after the first DOWN, and still no consumer
            await("readiness asked twice").atMost(Duration.ofSeconds(30)).until(() -> HeldReadiness.CALLS.get() >= 2);
            for (String consumer : CONSUMERS) {
                PausableChannel channel = channels.getPausable(consumer);
                assertTrue(channel != null && channel.isPaused(), consumer + " must not consume before the instance is ready");
            }
            assertEquals("WAIT_PAY", db.string("SELECT status FROM orders WHERE id = $1", order));

            HeldReadiness.UP.set(true);
            Topics.awaitCoupon(db, "paid:" + order);
        }
        assertEquals("PAID", db.string("SELECT status FROM orders WHERE id = $1", order));
        for (String consumer : CONSUMERS) {
            assertFalse(channels.getPausable(consumer).isPaused(), consumer + " consumes once the instance is ready");
        }
    }
}
