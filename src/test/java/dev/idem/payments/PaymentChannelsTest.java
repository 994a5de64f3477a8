package dev.idem.payments;

import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Db;
import dev.idem.testing.Gateway;
import dev.idem.testing.Http;
import dev.idem.testing.Topics;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** One payment notified by REST and by Kafka at the same time is still one payment. */
@QuarkusTest
class PaymentChannelsTest {

    static final String TOPIC = "payment-callbacks";

    @Inject
    Pool pool;

    @Test
    void twiceByRestAndTwiceByKafkaAtOncePaysOnceAndGrantsOnce() throws Exception {
        Db db = new Db(pool);
        String user = "channels-" + UUID.randomUUID();
        List<String> orders = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            orders.add(newOrder(user, 1999));
        }

        List<Supplier<HttpRequest>> rest = new ArrayList<>();
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            for (String order : orders) {
                String body = callback("T-" + order, order, 1999, "SUCCESS");
                for (int copy = 0; copy < 2; copy++) {
                    rest.add(() -> Gateway.signed(Http.post("/api/payments/callback", body), Gateway.SECRET, body));
                }
            }
            CompletableFuture<Void> byKafka = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < orders.size(); i++) {
                    String order = orders.get(i);
                    String body = callback("T-" + order, order, 1999, "SUCCESS");
                    kafka.send(TOPIC, i % Topics.PARTITIONS, "T-" + order, body);
                    kafka.send(TOPIC, (i + 1) % Topics.PARTITIONS, "T-" + order, body);
                }
            });
            List<Http.Answer> answers = new Http().all(rest, 16, null);
            byKafka.get();

            for (Http.Answer answer : answers) {
                assertEquals(200, answer.status(), answer.body());
                assertEquals("SUCCESS", new JsonObject(answer.body()).getString("code"));
            }
            long firsts = answers.stream().filter(a -> !new JsonObject(a.body()).getBoolean("duplicate", false)).count();
            assertTrue(firsts <= orders.size(), "at most one first delivery per order over REST: " + firsts);

            for (String order : orders) {
                Topics.awaitCoupon(db, "paid:" + order);
            }
            // a last payment on every partition: once it is applied, all before it were consumed
            for (int partition = 0; partition < Topics.PARTITIONS; partition++) {
                String sentinel = newOrder(user + "-sentinel", 1999);
                kafka.send(TOPIC, partition, "T-" + sentinel, callback("T-" + sentinel, sentinel, 1999, "SUCCESS"));
                Topics.awaitCoupon(db, "paid:" + sentinel);
            }
        }

        String[] ids = orders.toArray(String[]::new);
        assertEquals(orders.size(), db.count("SELECT count(*) FROM orders WHERE id = ANY($1) AND status = 'PAID'", (Object) ids));
        assertEquals(orders.size(), db.count("SELECT count(*) FROM outbox_event WHERE event_key = ANY($1)",
                (Object) orders.stream().map(o -> "paid:" + o).toArray(String[]::new)));
        assertEquals(orders.size(), db.count("SELECT count(*) FROM coupons WHERE order_id = ANY($1)", (Object) ids));
        assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = ANY($1)", (Object) ids));
    }
}
