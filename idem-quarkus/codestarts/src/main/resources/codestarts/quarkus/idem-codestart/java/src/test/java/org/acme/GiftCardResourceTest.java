package org.acme;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Against the real servers: PostgreSQL (giftcards_test), Redis and Kafka of ./idem services up. */
@QuarkusTest
class GiftCardResourceTest {

    @Inject
    Pool pool;

    @Test
    void aRetryIsReplayedAndTakesTheBalanceOnce() {
        UUID card = newCard(5000);
        String key = UUID.randomUUID().toString();

        Response first = redeem(card, key, 1200);
        first.then().statusCode(201).body("balanceCents", is(3800));
        assertNull(first.header("Idempotent-Replayed"));

        Response again = redeem(card, key, 1200);
        again.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertEquals(first.asString(), again.asString());

        redeem(card, key, 1300).then().statusCode(422).body("code", is("IDEMPOTENCY_KEY_REUSED"));
        assertEquals(3800, balance(card));
    }

    @Test
    void aShortBalanceIsTheKeysAnswerEvenAfterATopUp() {
        UUID card = newCard(1000);
        String key = UUID.randomUUID().toString();

        Response refused = redeem(card, key, 1200);
        refused.then().statusCode(409).body("code", is("BALANCE_SHORT"));
        topUp(card, 5000);

        // the same request again: the first answer, not a second try
        Response again = redeem(card, key, 1200);
        again.then().statusCode(409).header("Idempotent-Replayed", "true");
        assertEquals(refused.asString(), again.asString());
        assertEquals(6000, balance(card));

        // a new key is a new request
        redeem(card, UUID.randomUUID().toString(), 1200).then().statusCode(201).body("balanceCents", is(4800));
    }

    private void topUp(UUID card, long amountCents) {
        pool.preparedQuery("UPDATE gift_card SET balance_cents = balance_cents + $2 WHERE card_id = $1")
                .execute(Tuple.of(card, amountCents)).await().indefinitely();
    }

    private static Response redeem(UUID card, String key, long amountCents) {
        return given().header("X-User-Id", "u1").header("Idempotency-Key", key)
                .contentType(ContentType.JSON).body("{\"amountCents\":" + amountCents + "}")
                .post("/api/gift-cards/{cardId}/redemptions", card);
    }

    private UUID newCard(long balanceCents) {
        UUID card = UUID.randomUUID();
        pool.preparedQuery("INSERT INTO gift_card (card_id, biz_key, user_id, balance_cents) VALUES ($1, $2, 'u1', $3)")
                .execute(Tuple.of(card, "test-" + card, balanceCents)).await().indefinitely();
        return card;
    }

    private long balance(UUID card) {
        return pool.preparedQuery("SELECT balance_cents FROM gift_card WHERE card_id = $1")
                .execute(Tuple.of(card)).await().indefinitely().iterator().next().getLong(0);
    }
}
