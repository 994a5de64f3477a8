package dev.idem.payments;

import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Db;
import dev.idem.testing.GatewaysOn;
import dev.idem.testing.Gateway;
import dev.idem.testing.Http;
import dev.idem.testing.Topics;
import dev.idem.testing.WeChatPaySimulator;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * One payment notified at once in WeChat Pay's format, in the HMAC-signed format and on Kafka:
 * the same dedup key and fingerprint, so one transition, one outbox event, one coupon.
 */
@QuarkusTest
@TestProfile(GatewaysOn.class)
class GatewayChannelsTest {

    static final String TOPIC = "payment-callbacks";
    static final long AMOUNT = 1999;

    @Inject
    Pool pool;

    @Test
    void weChatPayHmacAndKafkaAtOnceHaveOneEffect() throws Exception {
        Db db = new Db(pool);
        String user = "gateway-channels-" + UUID.randomUUID();
        WeChatPaySimulator wechat = WeChatPaySimulator.configured();
        List<String> orders = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            orders.add(newOrder(user, AMOUNT));
        }

        List<Supplier<HttpRequest>> rest = new ArrayList<>();
        for (String order : orders) {
            String trade = "4200" + order;
            String wechatBody = wechat.notification(order, trade, "SUCCESS", AMOUNT);
            String hmacBody = callback(trade, order, AMOUNT, "SUCCESS");
            for (int copy = 0; copy < 2; copy++) {
                rest.add(() -> wechat.request(wechatBody));
                rest.add(() -> Gateway.signed(Http.post("/api/payments/callback", hmacBody), Gateway.SECRET, hmacBody));
            }
        }
        Collections.shuffle(rest, new Random(7));
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            CompletableFuture<Void> byKafka = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < orders.size(); i++) {
                    String order = orders.get(i);
                    String body = callback("4200" + order, order, AMOUNT, "SUCCESS");
                    kafka.send(TOPIC, i % Topics.PARTITIONS, "4200" + order, body);
                    kafka.send(TOPIC, (i + 1) % Topics.PARTITIONS, "4200" + order, body);
                }
            });
            List<Http.Answer> answers = new Http().all(rest, 16, null);
            byKafka.get();

            for (Http.Answer answer : answers) {
                assertEquals(200, answer.status(), answer.body());
                if (!answer.body().isEmpty()) {
                    assertEquals("SUCCESS", new JsonObject(answer.body()).getString("code"), answer.body());
                }
            }
            for (String order : orders) {
                Topics.awaitCoupon(db, "paid:" + order);
            }
            // a last payment on every partition: once it is applied, all before it were consumed
            for (int partition = 0; partition < Topics.PARTITIONS; partition++) {
                String sentinel = newOrder(user + "-sentinel", AMOUNT);
                kafka.send(TOPIC, partition, "T-" + sentinel, callback("T-" + sentinel, sentinel, AMOUNT, "SUCCESS"));
                Topics.awaitCoupon(db, "paid:" + sentinel);
            }
        }

        String[] ids = orders.toArray(String[]::new);
        String[] keys = orders.stream().map(o -> "4200" + o + ":SUCCESS").toArray(String[]::new);
        assertEquals(orders.size(), db.count("SELECT count(*) FROM orders WHERE id = ANY($1) AND status = 'PAID' "
                + "AND trade_no = '4200' || id", (Object) ids));
        assertEquals(orders.size(), db.count("SELECT count(*) FROM outbox_event WHERE event_key = ANY($1)",
                (Object) orders.stream().map(o -> "paid:" + o).toArray(String[]::new)));
        assertEquals(orders.size(), db.count("SELECT count(*) FROM coupons WHERE order_id = ANY($1)", (Object) ids));
        assertEquals(orders.size(), db.count("SELECT count(*) FROM dedup_record WHERE scope = 'payment-callback' "
                + "AND key = ANY($1) AND status = 'DONE'", (Object) keys));
        assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = ANY($1)", (Object) ids));
    }
}
