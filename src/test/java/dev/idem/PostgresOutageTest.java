package dev.idem;

import static dev.idem.testing.Callbacks.deliver;
import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.Db;
import dev.idem.testing.Kafka;
import dev.idem.testing.Metrics;
import dev.idem.testing.PostgresBehindProxy;
import dev.idem.testing.Tokens;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
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

        try (Kafka kafka = new Kafka()) {
            Metrics before = Metrics.scrape();
            PostgresBehindProxy.proxy().cut();
            try {
                deliver(body).then().statusCode(503)
                        .contentType("application/problem+json")
                        .header("Retry-After", "1")
                        .body("code", equalTo("SERVICE_UNAVAILABLE"));
                kafka.send("payment-callbacks", null, "T-" + order, body);
                bizKeys.forEach(key -> kafka.send("coupon-grants", null, key, Kafka.grant(key, user)));

                // the grant consumer met the outage and keeps retrying, rather than skipping ahead
                Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                        .until(() -> Metrics.scrape().delta(before, "idem_messaging_retries_total", GRANTS_CHANNEL) >= 3);
            } finally {
                PostgresBehindProxy.proxy().restore();
            }

            Awaitility.await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
                    .until(() -> couponsOf(db, user) == GRANTS + 1);

            assertEquals("PAID", db.string("SELECT status FROM orders WHERE id = $1", order));
            for (String key : bizKeys) {
                assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE source_key = $1", key), key);
            }
            assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE source_key = $1", "paid:" + order));
            Set<String> ours = Set.copyOf(bizKeys);
            List<String> deadLettered = kafka.readAll("coupon-grants-dlq").stream()
                    .map(Kafka.Record::key).filter(ours::contains).collect(Collectors.toList());
            assertEquals(List.of(), deadLettered, "a transient failure is retried, never dead-lettered");
            assertEquals(0, kafka.readAll("payment-callbacks-dlq").stream()
                    .filter(r -> ("T-" + order).equals(r.key())).count());
        }
        deliver(body).then().statusCode(200).body("duplicate", equalTo(true));
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
