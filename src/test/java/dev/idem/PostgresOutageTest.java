package dev.idem;

import static dev.idem.testing.Callbacks.deliver;
import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.pipeline.KafkaTestClient.ReadRecord;
import dev.idem.testing.Db;
import dev.idem.testing.Gateway;
import dev.idem.testing.Http;
import dev.idem.testing.Metrics;
import dev.idem.testing.PostgresBehindProxy;
import dev.idem.testing.Tokens;
import dev.idem.testing.Topics;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Postgres goes away while deliveries arrive: REST answers 503 (the gateway retries), Kafka
 * records wait and are applied once it is back, and nothing is dead-lettered or doubled.
 */
@QuarkusTest
@WithTestResource(PostgresBehindProxy.class)
class PostgresOutageTest {

    static final int GRANTS = 20;
    static final Map<String, String> GRANTS_CHANNEL = Map.of("channel", "coupon-grants");

    @Inject
    Pool pool;

    @Test
    void deliveriesDuringAnOutageWaitAndAreAppliedOnceAfterwards() throws Exception {
        Db db = new Db(pool);
        String user = "outage-" + UUID.randomUUID();
        String order = newOrder(user, 1999);
        String body = callback("T-" + order, order, 1999, "SUCCESS");
        List<String> bizKeys = new ArrayList<>();
        for (int i = 0; i < GRANTS; i++) {
            bizKeys.add("outage:" + UUID.randomUUID());
        }

        try (KafkaTestClient kafka = new KafkaTestClient()) {
            Metrics before = Metrics.scrape();
            PostgresBehindProxy.proxy().cut();
            try {
                deliver(body).then().statusCode(503)
                        .contentType("application/problem+json")
                        .header("Retry-After", "1")
                        .body("code", equalTo("SERVICE_UNAVAILABLE"));
                kafka.send("payment-callbacks", null, "T-" + order, body);
                bizKeys.forEach(key -> kafka.send("coupon-grants", null, key, Topics.grant(key, user)));

                // the grant consumer met the outage and keeps retrying, rather than skipping ahead
                Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                        .until(() -> Metrics.scrape().delta(before, "idem_messaging_retries_total", GRANTS_CHANNEL) >= 3);
            } finally {
                PostgresBehindProxy.proxy().restore();
            }

            try {
                Awaitility.await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
                        .until(() -> couponsOf(db, user) == GRANTS + 1);
            } catch (ConditionTimeoutException stuck) {
                throw new AssertionError("after the outage: order " + order + " is "
                        + db.string("SELECT status FROM orders WHERE id = $1", order) + ", its coupon "
                        + db.count("SELECT count(*) FROM coupons WHERE source_key = $1", "paid:" + order)
                        + ", its grant event " + db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1",
                        "paid:" + order) + ", coupons of the grants " + (couponsOf(db, user)
                        - db.count("SELECT count(*) FROM coupons WHERE source_key = $1", "paid:" + order))
                        + " of " + GRANTS, stuck);
            }

            assertEquals("PAID", db.string("SELECT status FROM orders WHERE id = $1", order));
            for (String key : bizKeys) {
                assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE source_key = $1", key), key);
            }
            assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE source_key = $1", "paid:" + order));
            Set<String> ours = Set.copyOf(bizKeys);
            List<String> deadLettered = kafka.readAll("coupon-grants-dlq").stream()
                    .map(ReadRecord::key).filter(ours::contains).collect(Collectors.toList());
            assertEquals(List.of(), deadLettered, "a transient failure is retried, never dead-lettered");
            assertEquals(0, kafka.readAll("payment-callbacks-dlq").stream()
                    .filter(r -> ("T-" + order).equals(r.key())).count());
        }
        deliver(body).then().statusCode(200).body("duplicate", equalTo(true));
    }

    /**
     * Postgres cut off while a storm is in flight, many deliveries sharing transactions: each
     * delivery is answered 200 or 503, no order is left half-applied, and delivering everything
     * again applies each payment exactly once.
     */
    @Test
    void aStormCutOffMidwayLeavesNoOrderHalfAppliedAndIsAppliedOnceWhenRetried() throws Exception {
        Db db = new Db(pool);
        String user = "outage-storm-" + UUID.randomUUID();
        List<String> orders = new ArrayList<>();
        for (int i = 0; i < 80; i++) {
            orders.add(newOrder(user, 1999));
        }
        List<Supplier<HttpRequest>> storm = new ArrayList<>();
        for (String order : orders) {
            String body = callback("T-" + order, order, 1999, "SUCCESS");
            for (int copy = 0; copy < 2; copy++) {
                storm.add(() -> Gateway.signed(Http.post("/api/payments/callback", body), Gateway.SECRET, body));
            }
        }

        List<Http.Answer> answers;
        try {
            answers = new Http().all(storm, 24, () -> {
                try {
                    PostgresBehindProxy.proxy().cut();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } finally {
            PostgresBehindProxy.proxy().restore();
        }

        Set<String> answeredPaid = new HashSet<>();
        long unavailable = 0;
        for (int i = 0; i < answers.size(); i++) {
            Http.Answer answer = answers.get(i);
            if (answer.status() == 200) {
                answeredPaid.add(orders.get(i / 2));
            } else {
                assertEquals(503, answer.status(), answer.body());
                assertEquals("SERVICE_UNAVAILABLE", new JsonObject(answer.body()).getString("code"));
                unavailable++;
            }
        }
        assertTrue(unavailable > 0, "the cut came while deliveries were still to be answered");
        for (String order : orders) {
            boolean paid = "PAID".equals(db.string("SELECT status FROM orders WHERE id = $1", order));
            long events = db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1", "paid:" + order);
            long records = db.count("SELECT count(*) FROM dedup_record WHERE scope = 'payment-callback' AND key = $1",
                    "T-" + order + ":SUCCESS");
            assertEquals(paid ? List.of(1L, 1L) : List.of(0L, 0L), List.of(events, records),
                    order + " is whole: paid with its grant and record, or untouched");
            assertTrue(paid || !answeredPaid.contains(order), order + " was answered 200 but is not paid");
        }

        // the gateway retries every payment once Postgres is back: each is applied exactly once
        for (String order : orders) {
            deliver(callback("T-" + order, order, 1999, "SUCCESS")).then().statusCode(200);
        }
        String[] ids = orders.toArray(String[]::new);
        assertEquals(orders.size(), db.count("SELECT count(*) FROM orders WHERE id = ANY($1) AND status = 'PAID'",
                (Object) ids));
        assertEquals(orders.size(), db.count("SELECT count(*) FROM outbox_event WHERE event_key = ANY($1)",
                (Object) orders.stream().map(o -> "paid:" + o).toArray(String[]::new)));
    }

    static long couponsOf(Db db, String user) {
        return db.count("SELECT count(*) FROM coupons WHERE user_id = $1", user);
    }

    @Test
    void aTokenSpentOnAnOrderThatCouldNotBeStoredIsGivenBack() throws Exception {
        String user = "outage-token-" + UUID.randomUUID();
        String token = Tokens.issue(user);

        PostgresBehindProxy.proxy().cut();
        try {
            Tokens.submit(user, token).then().statusCode(503).body("code", equalTo("SERVICE_UNAVAILABLE"));
        } finally {
            PostgresBehindProxy.proxy().restore();
        }

        Tokens.submit(user, token).then().statusCode(201);
        Tokens.submit(user, token).then().statusCode(409).body("code", equalTo("TOKEN_INVALID"));
        assertEquals(1, new Db(pool).count("SELECT count(*) FROM orders WHERE user_id = $1", user));
    }
}
