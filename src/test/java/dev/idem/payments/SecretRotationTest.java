package dev.idem.payments;

import static dev.idem.testing.Callbacks.deliver;
import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static dev.idem.testing.Problems.problem;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.Db;
import dev.idem.testing.Gateway;
import dev.idem.testing.Metrics;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * While the gateway rotates its HMAC secret, deliveries signed with a previous secret (the test
 * profile lists two) are accepted and counted apart from the current one's; any other is refused.
 */
@QuarkusTest
class SecretRotationTest {

    static final String PREVIOUS = "test-previous-callback-secret";
    static final String OLDER = "test-older-callback-secret";
    static final String SIGNATURES = "idem_callback_signatures_total";
    static final Map<String, String> CURRENT = Map.of("secret", "current");
    static final Map<String, String> PREVIOUS_SECRETS = Map.of("secret", "previous");

    @Inject
    Db db;

    final String user = "rotation-" + UUID.randomUUID();

    static Response signedWith(String secret, String body) {
        long now = Gateway.now();
        return deliver(body, now, Gateway.sign(secret, now, body));
    }

    String status(String order) {
        return db.string("SELECT status FROM orders WHERE id = $1", order);
    }

    @Test
    void previousSecretsAreAcceptedAndCountedApart() {
        String order = newOrder(user, 1999);
        String body = callback("T-" + order, order, 1999, "SUCCESS");
        Metrics before = Metrics.scrape();

        signedWith(PREVIOUS, body).then().statusCode(200).body("code", equalTo("SUCCESS"));
        signedWith(OLDER, body).then().statusCode(200).body("duplicate", equalTo(true));
        signedWith(Gateway.SECRET, body).then().statusCode(200).body("duplicate", equalTo(true));

        Metrics after = Metrics.scrape();
        assertEquals(2, after.delta(before, SIGNATURES, PREVIOUS_SECRETS));
        assertEquals(1, after.delta(before, SIGNATURES, CURRENT));
        assertEquals("PAID", status(order));
    }

    @Test
    void theCurrentSecretIsCountedAsCurrent() {
        String order = newOrder(user, 1999);
        Metrics before = Metrics.scrape();

        signedWith(Gateway.SECRET, callback("T-" + order, order, 1999, "SUCCESS")).then().statusCode(200);

        Metrics after = Metrics.scrape();
        assertEquals(1, after.delta(before, SIGNATURES, CURRENT));
        assertEquals(0, after.delta(before, SIGNATURES, PREVIOUS_SECRETS));
    }

    @Test
    void anUnknownSecretIsRefusedAndNotCounted() {
        String order = newOrder(user, 1999);
        Metrics before = Metrics.scrape();

        problem(signedWith("test-unknown-secret", callback("T-" + order, order, 1999, "SUCCESS")),
                401, "SIGNATURE_INVALID");

        Metrics after = Metrics.scrape();
        assertEquals(0, after.delta(before, SIGNATURES, CURRENT));
        assertEquals(0, after.delta(before, SIGNATURES, PREVIOUS_SECRETS));
        assertEquals("WAIT_PAY", status(order));
    }
}
