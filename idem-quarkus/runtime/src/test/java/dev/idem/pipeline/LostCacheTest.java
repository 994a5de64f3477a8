package dev.idem.pipeline;

import static dev.idem.pipeline.PipelineRig.await;
import static dev.idem.pipeline.PipelineRig.request;
import static dev.idem.pipeline.PipelineRig.result;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * A key outlives its Redis entry: the TTL passed, Redis was flushed, or the entry was deleted. The
 * next copy is then claimed as new, so its work runs before any record is looked up. Whether the
 * work has a unique constraint of its own (a newcomer's plain insert) or none, the copy is judged
 * by the first delivery's record: a duplicate with the first answer, never a failure.
 */
class LostCacheTest {

    private final PipelineRig rig = new PipelineRig();
    private final IdemRequest redeem = request("gift-card-redeem", "k-1", "card-1", 500);

    /** The ways a key leaves Redis before its record leaves the database. */
    enum Loss {
        EXPIRED {
            void lose(PipelineRig rig, IdemRequest request) {
                rig.clock.advance(rig.config.redisTtl(request.scope()).plusSeconds(1));
            }
        },
        FLUSHED {
            void lose(PipelineRig rig, IdemRequest request) {
                rig.cache.flush();
            }
        },
        DELETED {
            void lose(PipelineRig rig, IdemRequest request) {
                await(rig.cache.forget(request.scope(), request.key()));
            }
        };

        abstract void lose(PipelineRig rig, IdemRequest request);
    }

    /** A work with a unique row of its own, and one without. */
    enum Kind {
        UNIQUE(PipelineRig::inserting),
        PLAIN(PipelineRig::applying);

        final BiFunction<PipelineRig, IdemRequest, Work> work;

        Kind(BiFunction<PipelineRig, IdemRequest, Work> work) {
            this.work = work;
        }
    }

    @ParameterizedTest
    @EnumSource(Loss.class)
    void aCopyWhoseKeyLeftRedisIsADuplicateFromTheDatabaseWhenTheWorkHasAUniqueConstraint(Loss loss) {
        copyAfter(loss, Kind.UNIQUE);
    }

    @ParameterizedTest
    @EnumSource(Loss.class)
    void aCopyWhoseKeyLeftRedisIsADuplicateFromTheDatabaseWhenTheWorkHasNone(Loss loss) {
        copyAfter(loss, Kind.PLAIN);
    }

    private void copyAfter(Loss loss, Kind kind) {
        assertEquals(new Outcome.Processed(result("k-1")), await(rig.pipeline.execute(redeem, kind.work.apply(rig, redeem))));
        loss.lose(rig, redeem);
        rig.clock.advance(Duration.ofSeconds(1));

        Outcome copy = await(rig.pipeline.execute(redeem, kind.work.apply(rig, redeem)));

        assertEquals(new Outcome.Duplicate(Layer.DB, result("k-1")), copy);
        assertEquals(Map.of("effect:k-1", redeem.fingerprint()), rig.db.rows());
        // Redis knows the key again: the next copy stops there
        assertEquals(new Outcome.Duplicate(Layer.REDIS, result("k-1")),
                await(rig.pipeline.execute(redeem, kind.work.apply(rig, redeem))));
        assertEquals(2, rig.runs("k-1"));
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aCopyInAKafkaPollWhoseKeyLeftRedisIsADuplicateFromTheDatabase(Kind kind) {
        IdemRequest other = request("gift-card-redeem", "k-2", "card-2", 700);
        await(rig.pipeline.execute(redeem, kind.work.apply(rig, redeem)));
        rig.cache.flush();

        List<Outcome> outcomes = await(rig.pipeline.executeAll(List.of(
                new Item(redeem, kind.work.apply(rig, redeem)), new Item(other, kind.work.apply(rig, other)))));

        assertEquals(List.of(new Outcome.Duplicate(Layer.DB, result("k-1")), new Outcome.Processed(result("k-2"))),
                outcomes);
        assertEquals(Map.of("effect:k-1", redeem.fingerprint(), "effect:k-2", other.fingerprint()), rig.db.rows());
    }

    @Test
    void theSameKeyWithAnotherPayloadAfterRedisLostItIsAReusedKey() {
        await(rig.pipeline.execute(redeem, rig.inserting(redeem)));
        rig.cache.flush();
        IdemRequest reused = request("gift-card-redeem", "k-1", "card-1", 900);

        assertEquals(new Outcome.KeyReused(), await(rig.pipeline.execute(reused, rig.inserting(reused))));
        assertEquals(Map.of("effect:k-1", redeem.fingerprint()), rig.db.rows());
    }

    @Test
    void aUniqueViolationWithNoRecordBehindItIsRejectedOnceNotRetriedAndLeavesNoClaim() {
        // the row was made under another key (or under this one, whose record was archived since)
        IdemRequest other = request("gift-card-redeem", "k-0", "card-1", 500);
        IdemRequest first = request("gift-card-redeem", "k-1", "card-1", 500);
        await(rig.pipeline.execute(other, tx -> rig.db.insert(tx, "effect:k-1", other.fingerprint())
                .replaceWith(new Effect.Processed(result("k-0")))));

        Outcome outcome = await(rig.pipeline.execute(first, rig.inserting(first)));

        Outcome.Rejected rejected = assertInstanceOf(Outcome.Rejected.class, outcome);
        assertEquals(Outcome.Rejected.UNIQUE_VIOLATION, rejected.reason());
        assertTrue(rejected.detail().contains("effect:k-1"), rejected.detail());
        assertEquals(1, rig.runs("k-1"));
        assertTrue(rig.db.committed(first).isEmpty());
        assertEquals(Optional.empty(), await(rig.cache.peek(first.scope(), first.key())));
        assertEquals(1.0, rig.count("idem.pipeline.outcomes", "scope", "gift-card-redeem", "outcome", "REJECTED"));
    }

    @Test
    void aRefusalIsTheKeysAnswerInRedisAndWhenRedisLostItInTheDatabase() {
        Effect.Rejected refusal = new Effect.Rejected("INSUFFICIENT_BALANCE", "the card holds less");
        assertEquals(new Outcome.Rejected("INSUFFICIENT_BALANCE", "the card holds less"),
                await(rig.pipeline.execute(redeem, rig.work(redeem, refusal))));
        assertTrue(await(rig.cache.peek(redeem.scope(), redeem.key())).orElseThrow().contains("INSUFFICIENT_BALANCE"));

        // the world changed (the card was topped up): the key's answer does not
        Outcome again = await(rig.pipeline.execute(redeem, rig.applying(redeem)));
        assertEquals(new Outcome.Rejected("INSUFFICIENT_BALANCE", "the card holds less", new JsonObject(),
                Optional.of(Layer.REDIS)), again);
        rig.cache.flush();
        Outcome fromTheDatabase = await(rig.pipeline.execute(redeem, rig.applying(redeem)));
        assertEquals(Optional.of(Layer.DB), assertInstanceOf(Outcome.Rejected.class, fromTheDatabase).replayedBy());
        // the copy after the flush was claimed as new, so its work ran, and rolled back when the record answered
        assertEquals(2, rig.runs("k-1"));
        assertTrue(rig.db.rows().isEmpty());
        assertEquals(2.0, rig.count("idem.pipeline.duplicates", "scope", "gift-card-redeem"));
        assertEquals(3.0, rig.count("idem.pipeline.outcomes", "scope", "gift-card-redeem", "outcome", "REJECTED"));
    }

    @Test
    void aRefusalForNowGivesItsClaimBackAndTheNextDeliveryRunsTheWork() {
        Outcome outcome = await(rig.pipeline.execute(redeem,
                rig.work(redeem, Effect.Rejected.forNow("CARD_NOT_FOUND", "no card 1 yet"))));

        assertEquals(new Outcome.Rejected("CARD_NOT_FOUND", "no card 1 yet"), outcome);
        assertEquals(Optional.empty(), await(rig.cache.peek(redeem.scope(), redeem.key())));
        assertTrue(rig.db.committed(redeem).isEmpty());
        assertInstanceOf(Outcome.Processed.class, await(rig.pipeline.execute(redeem, rig.applying(redeem))));
    }

    @Test
    void aScopeThatStoresNoRefusalsGivesItsClaimBackAndRunsTheRetry() {
        PipelineRig judgedAfresh = new PipelineRig(Map.of("idem.pipeline.scopes.gift-card-redeem.store-refusals", "false"));
        Outcome outcome = await(judgedAfresh.pipeline.execute(redeem,
                judgedAfresh.work(redeem, new Effect.Rejected("INSUFFICIENT_BALANCE", "the card holds less"))));

        assertInstanceOf(Outcome.Rejected.class, outcome);
        assertEquals(Optional.empty(), await(judgedAfresh.cache.peek(redeem.scope(), redeem.key())));
        assertTrue(judgedAfresh.db.committed(redeem).isEmpty());
        assertInstanceOf(Outcome.Processed.class, await(judgedAfresh.pipeline.execute(redeem, judgedAfresh.applying(redeem))));
    }

    @Test
    void aFailedTransactionGivesItsClaimBack() {
        rig.faults.failWritesOf("effect:k-1");

        assertEquals(DedupStore.Failure.OTHER, rig.store.classify(assertInstanceOf(PgException.class,
                org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
                        () -> await(rig.pipeline.execute(redeem, rig.applying(redeem)))))));
        assertEquals(Optional.empty(), await(rig.cache.peek(redeem.scope(), redeem.key())));
    }
}
