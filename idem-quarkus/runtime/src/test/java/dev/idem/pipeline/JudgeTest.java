package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.CacheFirst.Settled;
import dev.idem.pipeline.DedupStore.Failure;
import dev.idem.pipeline.OnePhase.Open;
import dev.idem.pipeline.OnePhase.Pending;
import dev.idem.pipeline.OnePhase.Recorded;
import dev.idem.pipeline.OnePhase.Round;
import dev.idem.pipeline.OnePhase.Seen;
import dev.idem.pipeline.OnePhase.WorkRan;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Step 3 alone: what a transaction saw, turned into outcomes, retries and the commit. */
class JudgeTest {

    private static final PipelineConfig CONFIG = Configs.pipeline(Map.of());

    private final Open a = open(0, "a");
    private final Open b = open(1, "b");

    @Test
    void everyRecordWrittenCommitsWithTheResultsForRedis() {
        Round round = judge(List.of(a, b), ran(Map.of(), processed(a), processed(b),
                recorded(Map.of(0, "{\"k\":\"a\"}", 1, "{\"k\":\"b\"}"), Set.of(key(a), key(b)), Map.of())));

        assertEquals(DedupStore.Ending.COMMIT, round.ending());
        assertEquals(new Settled.Decided(new Outcome.Processed(result("a")), "{\"k\":\"a\"}"), round.decided().get(0));
        assertEquals(List.of(), round.again());
        assertEquals(Optional.empty(), round.retried());
    }

    @Test
    void recordsSentWithTheCommitAreDecidedAndTheTransactionIsOver() {
        Round round = judge(List.of(a), ran(Map.of(), processed(a), null,
                new Recorded(Map.of(0, "{\"k\":\"a\"}"), Set.of(key(a)), Map.of(), true)));

        assertEquals(DedupStore.Ending.ENDED, round.ending());
        assertEquals(new Settled.Decided(new Outcome.Processed(result("a")), "{\"k\":\"a\"}"), round.decided().get(0));
        assertEquals(List.of(), round.again());
    }

    @Test
    void recordsSentWithTheCommitThatMetARowRunAgainCarefullyButThoseFoundBefore() {
        Round round = judge(List.of(a, b), new Seen.Met(Map.of(key(a), done(a))));

        assertEquals(DedupStore.Ending.ENDED, round.ending());
        assertInstanceOf(Outcome.Duplicate.class, ((Settled.Decided) round.decided().get(0)).outcome());
        assertEquals(List.of(b.at()), round.again().stream().map(Open::at).toList());
        assertTrue(round.again().get(0).pending().suspect(), "its row is looked up before its work runs again");
        assertTrue(round.careful(), "the next round judges its records before it commits");
        assertEquals(Optional.of("conflict"), round.retried());
    }

    @Test
    void aRowFoundBeforeTheWorkIsTheKeysAnswer() {
        Round round = judge(List.of(a), ran(Map.of(key(a), done(a)), null, null, Recorded.NOTHING));

        Settled.Decided decided = (Settled.Decided) round.decided().get(0);
        assertInstanceOf(Outcome.Duplicate.class, decided.outcome());
        assertEquals("{\"k\":\"a\"}", decided.doneInCache());
        assertEquals(DedupStore.Ending.ROLLBACK, round.ending());
    }

    @Test
    void aWorkThatRefusedAfterWritingRollsBackAndIsRecordedNextAsItsRefusal() {
        Effect.Rejected refusal = new Effect.Rejected("NO_STOCK", "sold out");
        Seen seen = new Seen.Ran(Map.of(), Map.of(0, new WorkRan(refusal, 1, 1, 0), 1, work(b)), Optional.empty());

        Round round = judge(List.of(a, b), seen);

        assertEquals(DedupStore.Ending.ROLLBACK, round.ending());
        assertEquals(Map.of(), round.decided());
        assertEquals(List.of(a.refusing(refusal).at(), b.at()), round.again().stream().map(Open::at).toList());
        assertEquals(refusal, ((Work.Known) round.again().get(0).pending().work()).effect());
        assertEquals(b, round.again().get(1));
        assertEquals(Optional.of("refused"), round.retried());
    }

    @Test
    void aRecordThatMetAnotherRowIsJudgedByItAndTheOthersRunAgain() {
        Round round = judge(List.of(a, b), ran(Map.of(), processed(a), processed(b),
                recorded(Map.of(0, "{}", 1, "{}"), Set.of(key(b)), Map.of(key(a), done(a)))));

        assertEquals(DedupStore.Ending.ROLLBACK, round.ending());
        assertInstanceOf(Outcome.Duplicate.class, ((Settled.Decided) round.decided().get(0)).outcome());
        assertEquals(List.of(b), round.again());
        assertEquals(Optional.of("conflict"), round.retried());
    }

    @Test
    void aRowGoneByTheLookupIsTriedOnceMoreThenInFlight() {
        Seen vanished = ran(Map.of(), processed(a), null, recorded(Map.of(0, "{}"), Set.of(), Map.of()));

        Round first = judge(List.of(a), vanished);
        assertEquals(List.of(a.vanished()), first.again());

        Round second = judge(first.again(), vanished);
        assertInstanceOf(Outcome.InFlight.class, ((Settled.Decided) second.decided().get(0)).outcome());
        assertEquals(List.of(), second.again());
    }

    @Test
    void aFailedGroupRunsAgainEachAloneUnlessTheStoreIsDown() {
        Throwable failure = new IllegalStateException("boom");

        Round split = judge(List.of(a, b), new Seen.Failed(failure, Failure.OTHER, Map.of()));
        assertTrue(split.split());
        assertEquals(List.of(a, b), split.again());
        assertEquals(Optional.of("error"), split.retried());

        Round down = judge(List.of(a, b), new Seen.Failed(failure, Failure.UNAVAILABLE, Map.of()));
        assertFalse(down.split());
        assertEquals(new Settled.Failed(failure), down.decided().get(1));
    }

    @Test
    void aDeliveryAloneIsJudgedByWhatItsFailureSays() {
        Throwable failure = new IllegalStateException("23505");

        assertInstanceOf(Outcome.InFlight.class, outcome(judge(List.of(a), new Seen.Failed(failure, Failure.LOCK_NOT_AVAILABLE, Map.of()))));
        assertEquals(Outcome.Rejected.INVALID_DATA,
                ((Outcome.Rejected) outcome(judge(List.of(a), new Seen.Failed(failure, Failure.INVALID_DATA, Map.of())))).reason());
        assertEquals(Outcome.Rejected.UNIQUE_VIOLATION,
                ((Outcome.Rejected) outcome(judge(List.of(a), new Seen.Failed(failure, Failure.UNIQUE_VIOLATION, Map.of())))).reason());
        assertInstanceOf(Outcome.Duplicate.class,
                outcome(judge(List.of(a), new Seen.Failed(failure, Failure.UNIQUE_VIOLATION, Map.of(key(a), done(a))))));
    }

    private static Round judge(List<Open> open, Seen seen) {
        return OnePhase.judge(open, seen, CONFIG);
    }

    private static Outcome outcome(Round round) {
        return ((Settled.Decided) round.decided().get(0)).outcome();
    }

    private static Open open(int at, String key) {
        return new Open(at, new Pending(request(key), tx -> null, false), false);
    }

    private static IdemRequest request(String key) {
        return new IdemRequest("orders", key, "fp-" + key);
    }

    private static String key(Open open) {
        return open.batchKey();
    }

    private static JsonObject result(String key) {
        return new JsonObject().put("k", key);
    }

    private static WorkRan work(Open open) {
        return new WorkRan(new Effect.Processed(result(open.request().key())), 1, 1, 0);
    }

    private static Map.Entry<Integer, WorkRan> processed(Open open) {
        return Map.entry(open.at(), work(open));
    }

    private static Seen ran(Map<String, DedupRecord> before, Map.Entry<Integer, WorkRan> first,
                            Map.Entry<Integer, WorkRan> second, Recorded recorded) {
        Map<Integer, WorkRan> works = first == null ? Map.of()
                : second == null ? Map.ofEntries(first) : Map.ofEntries(first, second);
        return new Seen.Ran(before, works, Optional.of(recorded));
    }

    private static Recorded recorded(Map<Integer, String> results, Set<String> written, Map<String, DedupRecord> found) {
        return new Recorded(results, written, found);
    }

    private static DedupRecord done(Open open) {
        Instant at = Instant.parse("2026-12-01T00:00:00Z");
        return new DedupRecord(open.request().scope(), open.request().key(), open.request().fingerprint(),
                DedupRecord.Status.DONE, result(open.request().key()), 1, null, at, at, at.plusSeconds(86_400));
    }
}
