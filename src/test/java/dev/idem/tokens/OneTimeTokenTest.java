package dev.idem.tokens;

import static dev.idem.testing.Tokens.issue;
import static dev.idem.testing.Tokens.submit;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.Db;
import dev.idem.testing.Http;
import dev.idem.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Front-end double submits: one token, one order, however many clicks arrive at once. */
@QuarkusTest
class OneTimeTokenTest {

    @Inject
    Pool pool;

    long ordersOf(String user) {
        return new Db(pool).count("SELECT count(*) FROM orders WHERE user_id = $1", user);
    }

    @Test
    void aTokenCreatesOneOrderAndIsThenSpent() {
        String user = "tok-" + UUID.randomUUID();
        String token = issue(user);

        submit(user, token).then().statusCode(201).body("status", equalTo("WAIT_PAY")).body("userId", equalTo(user));
        submit(user, token).then().statusCode(409)
                .contentType("application/problem+json").body("code", equalTo("TOKEN_INVALID"));

        assertEquals(1, ordersOf(user));
    }

    @Test
    void aHundredConcurrentSubmitsWithOneTokenCreateOneOrder() {
        String user = "tok-" + UUID.randomUUID();
        String token = issue(user);
        List<Supplier<HttpRequest>> clicks = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            clicks.add(() -> Http.post("/api/orders", Tokens.ORDER)
                    .header("X-User-Id", user).header("Idempotency-Token", token).build());
        }

        List<Http.Answer> answers = new Http().all(clicks, 100, null);

        assertEquals(1, answers.stream().filter(a -> a.status() == 201).count());
        assertEquals(99, answers.stream().filter(a -> a.status() == 409 && a.body().contains("TOKEN_INVALID")).count());
        assertEquals(1, ordersOf(user));
    }

    @Test
    void anotherUsersTokenIsRefusedAndStaysValidForItsOwner() {
        String owner = "tok-" + UUID.randomUUID();
        String thief = "tok-" + UUID.randomUUID();
        String token = issue(owner);

        submit(thief, token).then().statusCode(409).body("code", equalTo("TOKEN_INVALID"));
        submit(owner, token).then().statusCode(201);

        assertEquals(0, ordersOf(thief));
        assertEquals(1, ordersOf(owner));
    }

    @Test
    void unknownTokensAndAnonymousCallersAreRefused() {
        String user = "tok-" + UUID.randomUUID();
        submit(user, "never-issued").then().statusCode(409).body("code", equalTo("TOKEN_INVALID"));
        given().post("/api/tokens").then().statusCode(401).body("code", equalTo("USER_MISSING"));
        assertEquals(0, ordersOf(user));
    }
}
