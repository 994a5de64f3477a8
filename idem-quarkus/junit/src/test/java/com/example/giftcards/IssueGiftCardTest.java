package com.example.giftcards;

import static dev.idem.pipeline.PipelineKit.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.IdemRequest;
import dev.idem.pipeline.Layer;
import dev.idem.pipeline.Outcome;
import dev.idem.pipeline.PipelineKit;
import dev.idem.pipeline.PipelineKit.KeyRecord;
import dev.idem.pipeline.Work;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A service's unit test of its work, as a service writes it with idem-quarkus-junit: the work that
 * issues a gift card under an Idempotency-Key, run by the real pipeline on the kit's in-memory
 * database and Redis. It uses the extension's public types only.
 */
class IssueGiftCardTest {

    // --- the service's code (src/main) ---------------------------------------------------------

    /** Where the service keeps its cards: in production, INSERTs through the pipeline's connection. */
    interface GiftCards {
        Uni<Void> issue(SqlConnection tx, String cardId, long cents);
    }

    /** The work: a new card for a positive amount; any other amount is refused, and that is the key's answer. */
    static Work issue(GiftCards cards, long cents) {
        return tx -> {
            if (cents <= 0) {
                return Uni.createFrom().item(new Effect.Rejected("INVALID_AMOUNT", "a card holds a positive amount"));
            }
            String cardId = UUID.randomUUID().toString();
            return cards.issue(tx, cardId, cents)
                    .replaceWith(Effect.processed(new JsonObject().put("cardId", cardId).put("cents", cents)));
        };
    }

    static IdemRequest request(String key, String customer, long cents) {
        return new IdemRequest("gift-card-issue", key, IdemRequest.fingerprint(customer, cents));
    }

    // --- the test's ----------------------------------------------------------------------------

    /** The test's repository: cards in memory, each issued when the pipeline's transaction commits. */
    record InMemoryGiftCards(PipelineKit kit, List<String> issued) implements GiftCards {
        InMemoryGiftCards(PipelineKit kit) {
            this(kit, new CopyOnWriteArrayList<>());
        }

        @Override
        public Uni<Void> issue(SqlConnection tx, String cardId, long cents) {
            return kit.database().write(tx, () -> issued.add(cardId));
        }
    }

    private final PipelineKit kit = new PipelineKit(Map.of("idem.pipeline.scopes.gift-card-issue.redis-ttl", "1h"));
    private final InMemoryGiftCards cards = new InMemoryGiftCards(kit);
    private final IdemRequest first = request("k-1", "ada", 5000);

    private Outcome deliver(IdemRequest request, long cents) {
        return await(kit.pipeline().execute(request, issue(cards, cents)));
    }

    @Test
    void theFirstDeliveryIssuesACardAndACopyIsAnsweredByRedis() {
        Outcome.Processed processed = (Outcome.Processed) deliver(first, 5000);

        assertEquals(new Outcome.Duplicate(Layer.REDIS, processed.result()), deliver(first, 5000));
        assertEquals(List.of(processed.result().getString("cardId")), cards.issued());
        KeyRecord record = kit.database().record(first).orElseThrow();
        assertEquals(KeyRecord.Status.DONE, record.status());
        assertEquals(first.fingerprint(), record.fingerprint());
        assertEquals(processed.result(), record.result());
        assertEquals(1, kit.database().transactions());
        assertEquals(1.0, kit.counted("idem.pipeline.outcomes", "scope", "gift-card-issue", "outcome", "DUPLICATE"));
    }

    @Test
    void aCopyAfterTheRedisTtlIsAnsweredFromTheDatabase() {
        Outcome.Processed processed = (Outcome.Processed) deliver(first, 5000);
        kit.clock().advance(Duration.ofHours(2));

        assertEquals(new Outcome.Duplicate(Layer.DB, processed.result()), deliver(first, 5000));
        assertEquals(1, cards.issued().size());
    }

    @Test
    void aCopyAfterRedisWasFlushedIsAnsweredFromTheDatabase() {
        Outcome.Processed processed = (Outcome.Processed) deliver(first, 5000);
        kit.redis().flush();

        assertEquals(new Outcome.Duplicate(Layer.DB, processed.result()), deliver(first, 5000));
        assertEquals(1, cards.issued().size());
    }

    @Test
    void aCopyWhileRedisIsDownIsAnsweredFromTheDatabase() {
        Outcome.Processed processed = (Outcome.Processed) deliver(first, 5000);
        kit.redis().goDown();

        assertEquals(new Outcome.Duplicate(Layer.DB, processed.result()), deliver(first, 5000));
        assertEquals(1, cards.issued().size());
    }

    @Test
    void aKeyReusedForAnotherCardIsKeyReused() {
        deliver(first, 5000);

        assertEquals(new Outcome.KeyReused(), deliver(request("k-1", "ada", 9000), 9000));
        assertEquals(1, cards.issued().size());
    }

    @Test
    void aRefusedAmountIsTheKeysAnswerAndANewKeyIsJudgedAfresh() {
        IdemRequest zero = request("k-2", "ada", 0);

        assertEquals(new Outcome.Rejected("INVALID_AMOUNT", "a card holds a positive amount"), deliver(zero, 0));
        assertEquals(PipelineKit.KeyRecord.Status.DONE, kit.database().record(zero).orElseThrow().status());
        Outcome.Rejected again = assertInstanceOf(Outcome.Rejected.class, deliver(zero, 0));
        assertTrue(again.replayed());
        assertEquals("INVALID_AMOUNT", again.reason());
        assertEquals(List.of(), cards.issued());

        IdemRequest corrected = request("k-3", "ada", 2000);
        assertEquals(Outcome.Processed.class, deliver(corrected, 2000).getClass());
        assertEquals(1, cards.issued().size());
    }

    @Test
    void whileTheDatabaseIsDownADeliveryFailsAsTransientAndIssuesNothing() {
        kit.database().goDown();

        RuntimeException failure = assertThrows(RuntimeException.class, () -> deliver(first, 5000));
        assertTrue(kit.pipeline().isTransient(failure), failure::toString);
        assertEquals(List.of(), cards.issued());

        kit.database().comeBack();
        assertEquals(Outcome.Processed.class, deliver(first, 5000).getClass());
        assertEquals(1, cards.issued().size());
    }

    @Test
    void aWorkThatSendsSqlLearnsThatTheKitRunsNone() {
        Work sql = tx -> tx.query("INSERT INTO gift_card DEFAULT VALUES").execute().replaceWith(Effect.processed());

        RuntimeException failure = assertThrows(RuntimeException.class,
                () -> await(kit.pipeline().execute(first, sql)));
        assertTrue(failure.getMessage().contains("runs no SQL"), failure.getMessage());
        assertTrue(failure.getMessage().contains("@QuarkusTest"), failure.getMessage());
        assertFalse(kit.database().record(first).isPresent());
    }
}
