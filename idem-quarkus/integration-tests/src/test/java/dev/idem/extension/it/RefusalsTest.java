package dev.idem.extension.it;

import static dev.idem.extension.it.Http.PROBLEM;
import static dev.idem.extension.it.Http.REPLAYED;
import static dev.idem.extension.it.Http.entry;
import static dev.idem.extension.it.Http.posting;
import static dev.idem.extension.it.Http.post;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.extension.it.Cache.Loss;
import dev.idem.pipeline.KafkaTestClient;
import dev.idem.pipeline.KafkaTestClient.ReadRecord;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.util.List;
import java.util.UUID;
import org.hamcrest.Matchers;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The key's answer is its first answer, a refusal included: a debit declined for a short balance
 * and retried with the same key after a top-up is declined again (byte for byte over HTTP,
 * dead-lettered again over Kafka), until the client uses a new key. What the declined work wrote
 * stays rolled back.
 */
@QuarkusTest
class RefusalsTest {

    @AutoClose
    final KafkaTestClient kafka = new KafkaTestClient();

    @Inject
    Db db;

    @Inject
    Cache cache;

    final String caller = "caller-" + UUID.randomUUID();
    final String account = "wallet-" + UUID.randomUUID();

    @ParameterizedTest
    @ValueSource(strings = {"/ledger", "/refusals/thrown"})
    void aDeclinedDebitRetriedAfterATopUpIsDeclinedAgainUntilANewKey(String path) {
        String scope = path.equals("/ledger") ? "ledger-entry" : "debit-thrown";
        String key = UUID.randomUUID().toString();

        Response declined = post(path, caller, key, entry(account, -500));
        declined.then().statusCode(409).contentType(PROBLEM).body("code", Matchers.equalTo("INSUFFICIENT_FUNDS"));
        assertNull(declined.header(REPLAYED));
        assertEquals(0, db.entries(account), "the entry the declined work wrote rolled back");
        assertEquals(1, db.records(scope, caller + ":" + key));

        post("/ledger", caller, UUID.randomUUID().toString(), entry(account, 1000)).then().statusCode(201);

        Response again = post(path, caller, key, entry(account, -500));
        again.then().statusCode(409).contentType(PROBLEM).header(REPLAYED, "true");
        assertArrayEquals(declined.asByteArray(), again.asByteArray());

        // Redis lost the key: the database's record gives the same answer
        Loss.DELETED.lose(cache, cache.key(scope, caller, key));
        Response fromTheDatabase = post(path, caller, key, entry(account, -500));
        fromTheDatabase.then().statusCode(409).header(REPLAYED, "true");
        assertArrayEquals(declined.asByteArray(), fromTheDatabase.asByteArray());
        assertEquals(1, db.entries(account), "only the top-up");

        post(path, caller, UUID.randomUUID().toString(), entry(account, -500)).then().statusCode(Matchers.lessThan(300));
        assertEquals(2, db.entries(account));
    }

    @Test
    void anAnswerOf500OrMoreIsAFailureAndKeepsNothing() {
        String key = UUID.randomUUID().toString();
        post("/refusals/unavailable", caller, key, entry(account, -500)).then().statusCode(503)
                .body("code", Matchers.equalTo("LIMITS_UNAVAILABLE"));
        assertEquals(0, db.records("debit-unavailable", caller + ":" + key));
        assertEquals(0, db.entries(account));

        post("/ledger", caller, UUID.randomUUID().toString(), entry(account, 1000)).then().statusCode(201);
        Response retried = post("/refusals/unavailable", caller, key, entry(account, -500));
        retried.then().statusCode(200).body("balance", Matchers.equalTo(500));
        assertNull(retried.header(REPLAYED));
    }

    @Test
    void aScopeThatStoresNoRefusalsRunsTheRetryAgain() {
        String key = UUID.randomUUID().toString();
        post("/refusals/afresh", caller, key, entry(account, -500)).then().statusCode(409);
        assertEquals(0, db.records("debit-afresh", caller + ":" + key));

        post("/ledger", caller, UUID.randomUUID().toString(), entry(account, 1000)).then().statusCode(201);
        Response retried = post("/refusals/afresh", caller, key, entry(account, -500));
        retried.then().statusCode(200).body("balance", Matchers.equalTo(500));
        assertNull(retried.header(REPLAYED));
        post("/refusals/afresh", caller, key, entry(account, -500)).then().statusCode(200).header(REPLAYED, "true");
    }

    @Test
    void anOverdraftDeliveredAgainAfterATopUpIsRefusedAgainAndANewRefIsApplied() {
        Channel ledger = Channel.of("ledger-postings");
        String run = UUID.randomUUID().toString();
        String debit = "refused-" + run;

        ledger.awaitSettled(kafka.send(ledger.topic(), 0, debit, posting(debit, account, -500)));
        List<ReadRecord> dead = ledger.deadLetters(kafka, debit);
        assertEquals(1, dead.size(), dead.toString());
        assertTrue(dead.get(0).reason().startsWith("INSUFFICIENT_FUNDS"), dead.get(0).reason());
        assertEquals(0, db.entries(account), "the entry the refused work wrote rolled back");

        String topUp = "top-up-" + run;
        ledger.awaitSettled(kafka.send(ledger.topic(), 1, topUp, posting(topUp, account, 1000)));
        assertEquals(1, db.entries(account));

        // the same record again, from Redis and then from the database: refused again, nothing entered
        ledger.awaitSettled(kafka.send(ledger.topic(), 2, debit, posting(debit, account, -500)));
        Loss.FLUSHED.lose(cache, cache.key("ledger-posting", debit));
        ledger.awaitSettled(kafka.send(ledger.topic(), 3, debit, posting(debit, account, -500)));
        dead = ledger.deadLetters(kafka, debit);
        assertEquals(3, dead.size(), dead.toString());
        for (ReadRecord again : dead.subList(1, 3)) {
            assertTrue(again.reason().startsWith("INSUFFICIENT_FUNDS") && again.reason().contains("first answer"),
                    again.reason());
        }
        assertEquals(1, db.entries(account), "only the top-up");

        String next = "debit-" + run;
        ledger.awaitSettled(kafka.send(ledger.topic(), 0, next, posting(next, account, -500)));
        assertEquals(2, db.entries(account));
        assertEquals(List.of(), ledger.deadLetters(kafka, next));
    }
}
