package dev.idem.outbox;

import static dev.idem.testing.Callbacks.deliver;
import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Db;
import dev.idem.testing.Metrics;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

@QuarkusTest
class OutboxRelayTest {

    @Inject
    Pool pool;

    /**
     * A relay that sent an event but died before marking it published sends it again after
     * restart; the consumer must take the second copy for the duplicate it is.
     */
    @Test
    void anEventPublishedTwiceStillGrantsOnce() {
        Db db = new Db(pool);
        String user = "relay-" + UUID.randomUUID();
        String order = newOrder(user, 1999);
        String bizKey = "paid:" + order;
        deliver(callback("T-" + order, order, 1999, "SUCCESS")).then().statusCode(200);
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            Topics.awaitCoupon(db, bizKey);
            Metrics before = Metrics.scrape();

            // as if the relay had crashed between the broker's ack and its UPDATE
            assertEquals(1, db.count("WITH r AS (UPDATE outbox_event SET published_at = NULL WHERE event_key = $1 RETURNING 1) "
                    + "SELECT count(*) FROM r", bizKey));

            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() ->
                    db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1 AND published_at IS NOT NULL", bizKey) == 1);
            Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() ->
                    Metrics.scrape().delta(before, "idem_pipeline_duplicates_total", Map.of("scope", "coupon-grant")) >= 1);
            Topics.drainGrants(kafka, db, user);
        }
        assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE source_key = $1", bizKey));
    }
}
