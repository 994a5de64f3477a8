package dev.idem;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.payments.PaymentService;
import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Callbacks;
import dev.idem.testing.Db;
import dev.idem.testing.Gateway;
import dev.idem.testing.KafkaCluster;
import dev.idem.testing.Metrics;
import dev.idem.testing.Storm;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * idem against three brokers with replicated topics (factor 3, min.insync.replicas 2): the outbox
 * relay (acks=all, idempotent) and the consumers keep exact accounts when a broker is killed in
 * the middle of a storm and started again.
 */
@QuarkusTest
@TestProfile(KafkaClusterTest.Cluster.class)
class KafkaClusterTest {

    public static class Cluster implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("kafka.bootstrap.servers", KafkaCluster.BOOTSTRAP);
        }
    }

    static final int ORDERS = 150;

    @Inject
    Pool pool;

    @AfterEach
    void everyBrokerBack() {
        KafkaCluster.startWhatIsDown();
    }

    @Test
    void aBrokerKilledInTheMiddleOfAStormAndStartedAgainChangesNoAccount() {
        Db db = new Db(pool);
        Storm storm = new Storm(db).createOrders(ORDERS);
        Metrics before = Metrics.scrape();
        AtomicBoolean killed = new AtomicBoolean();

        // six signed deliveries of each payment over HTTP; broker 2 dies halfway
        storm.deliver(6, 32, () -> {
            KafkaCluster.kill(2);
            killed.set(true);
        });
        assertTrue(killed.get());
        // and each payment twice more on payment-callbacks, while it is down
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            for (String order : storm.orderIds) {
                String callback = Gateway.callback(Storm.tradeNo(order), order, Storm.AMOUNT, "SUCCESS");
                kafka.send("payment-callbacks", null, Storm.tradeNo(order), callback);
                kafka.send("payment-callbacks", null, Storm.tradeNo(order), callback);
            }
            // the grants went out through the relay with a broker missing
            storm.assertPaidExactlyOnce();
            storm.assertOneCouponPerOrder();

            KafkaCluster.startWhatIsDown();
            // a last payment on every partition: once each is paid, all sent before it was consumed
            List<String> sentinels = new ArrayList<>();
            for (int partition = 0; partition < Topics.PARTITIONS; partition++) {
                String order = Callbacks.newOrder(storm.user + "-sentinel", Storm.AMOUNT);
                sentinels.add(order);
                kafka.send("payment-callbacks", partition, Storm.tradeNo(order),
                        Gateway.callback(Storm.tradeNo(order), order, Storm.AMOUNT, "SUCCESS"));
            }
            Awaitility.await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(250)).until(() ->
                    db.count("SELECT count(*) FROM orders WHERE id = ANY($1) AND status = 'PAID'",
                            (Object) sentinels.toArray(String[]::new)) == Topics.PARTITIONS);
        }
        storm.assertPaidExactlyOnce();
        storm.assertOneCouponPerOrder();
        long duplicates = Metrics.scrape().delta(before, "idem_pipeline_outcomes_total",
                Map.of("scope", PaymentService.SCOPE, "outcome", "DUPLICATE"));
        assertTrue(duplicates >= ORDERS * 7L, "every copy over HTTP and Kafka a duplicate: " + duplicates);

        // with every broker back, a storm is as exact
        Storm after = new Storm(db).createOrders(50);
        after.deliver(6, 32, null);
        after.assertPaidExactlyOnce();
        after.assertOneCouponPerOrder();
    }
}
