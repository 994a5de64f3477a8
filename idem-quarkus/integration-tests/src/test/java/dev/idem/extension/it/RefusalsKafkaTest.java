package dev.idem.extension.it;

import static dev.idem.extension.it.Http.posting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.extension.it.Cache.Loss;
import dev.idem.pipeline.KafkaTestClient;
import dev.idem.pipeline.KafkaTestClient.ReadRecord;
import dev.idem.pipeline.PipelineConfig;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A record its work refused is refused again when Kafka delivers it again, even after the world
 * changed: the refusal is its key's answer. A record with a new key is judged afresh.
 */
@QuarkusTest
class RefusalsKafkaTest {

    @Inject
    Pool pool;
    @Inject
    RedisDataSource redis;
    @Inject
    PipelineConfig config;

    Db db;
    Cache cache;
    KafkaTestClient kafka;
    Channel ledger;

    @BeforeEach
    void setUp() {
        db = new Db(pool);
        cache = new Cache(redis, config);
        kafka = new KafkaTestClient();
        ledger = Channel.of("ledger-postings");
    }

    @AfterEach
    void tearDown() {
        kafka.close();
    }

    @Test
    void anOverdraftDeliveredAgainAfterATopUpIsRefusedAgainAndANewRefIsApplied() {
        String run = UUID.randomUUID().toString();
        String account = "wallet-" + run;
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
