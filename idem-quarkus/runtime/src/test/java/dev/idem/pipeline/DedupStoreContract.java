package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.pipeline.DedupStore.Claim;
import dev.idem.pipeline.DedupStore.Ending;
import dev.idem.pipeline.DedupStore.Failure;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the protocols rely on of a {@link DedupStore}, asked alike of {@link PgDedupStore} on a
 * Postgres server ({@link PgDedupStoreTest}) and of the in-memory store the protocols' tests run on
 * ({@link InMemoryDedupStoreTest}), so that the fake does what the real store does. Concurrent
 * transactions are real ones, in step through futures: a transaction holds its key open until the
 * test lets it end, and the other's statement is seen waiting for it before it does.
 */
abstract class DedupStoreContract {

    static final Instant NOW = Instant.parse("2025-03-01T10:00:00Z");
    static final Instant LEASE = NOW.plusSeconds(30);
    static final Instant EXPIRES = NOW.plus(Duration.ofDays(2));
    static final JsonObject PAYLOAD = new JsonObject().put("amount", "10.00");
    static final Optional<Duration> UNBOUNDED = Optional.empty();

    static final IdemRequest A = new IdemRequest("orders", "a-1", "fa");
    static final IdemRequest B = new IdemRequest("orders", "b-1", "fb");
    static final IdemRequest C = new IdemRequest("orders", "c-1", "fc");

    DedupStore store;

    /** An empty store: no records and no business rows. */
    abstract DedupStore emptyStore();

    /** A store whose database cannot be reached. */
    abstract DedupStore unreachable();

    /** A statement of the work's own: inserts {@code name} into a table whose key it is. */
    abstract Uni<Void> insertRow(SqlConnection tx, String name);

    /** The committed business rows. */
    abstract Set<String> rows();

    /** Whether a statement is waiting for a lock that another transaction holds. */
    abstract boolean aStatementWaits();

    @BeforeEach
    void empty() {
        store = emptyStore();
    }

    // --- claim ----------------------------------------------------------------------------------

    @Test
    void aClaimWinsANewKeyAndFindsACommittedOne() {
        assertEquals(Claim.WON, inTx(tx -> claim(tx, A)));
        assertEquals(Claim.EXISTS, inTx(tx -> claim(tx, A)));
        assertEquals(Map.of(key(A), processing(A, 1, LEASE)), committed(A));
    }

    @Test
    void aClaimWaitsForTheTransactionHoldingItsKeyAndFindsWhatItCommitted() throws Exception {
        Holder first = Holder.claiming(this, A, true);
        CompletableFuture<Claim> second = later(UNBOUNDED, tx -> claim(tx, A));
        until(this::aStatementWaits);
        assertFalse(second.isDone());

        first.end();

        assertEquals(Claim.EXISTS, second.get(10, TimeUnit.SECONDS));
        assertEquals(Map.of(key(A), processing(A, 1, LEASE)), committed(A));
    }

    @Test
    void aClaimWaitingForARollbackWinsTheKey() throws Exception {
        Holder first = Holder.claiming(this, A, false);
        CompletableFuture<Claim> second = later(UNBOUNDED, tx -> claim(tx, A));
        until(this::aStatementWaits);

        first.end();

        assertEquals(Claim.WON, second.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aClaimWaitingPastItsTransactionsLockWaitIsLocked() throws Exception {
        Holder first = Holder.claiming(this, A, true);

        assertEquals(Claim.LOCKED, store.transaction(Optional.of(Duration.ofMillis(200)), tx -> claim(tx, A), c -> Ending.ROLLBACK)
                .await().atMost(Duration.ofSeconds(10)));

        first.end();
        assertEquals(Map.of(key(A), processing(A, 1, LEASE)), committed(A));
    }

    // --- recordAll and findAll ------------------------------------------------------------------

    @Test
    void recordsAreWrittenDoneAndFoundByTheirKeys() {
        assertEquals(Set.of(key(A), key(B)), inTx(tx -> record(tx, A, B)));

        assertEquals(Map.of(key(A), done(A), key(B), done(B)), committed(A, B, C));
    }

    @Test
    void recordingSkipsAKeyAnotherTransactionCommittedMeanwhile() throws Exception {
        Holder first = Holder.recording(this, B);
        CompletableFuture<Set<String>> second = later(UNBOUNDED, tx -> record(tx, A, B, C));
        until(this::aStatementWaits);

        first.end();

        assertEquals(Set.of(key(A), key(C)), second.get(10, TimeUnit.SECONDS));
        assertEquals(Map.of(key(A), done(A), key(B), done(B), key(C), done(C)), committed(A, B, C));
    }

    @Test
    void recordingAKeyHeldPastTheLockWaitFailsAsLockNotAvailable() {
        Holder first = Holder.recording(this, B);

        Throwable failure = failureOf(store.transaction(Optional.of(Duration.ofMillis(200)), tx -> record(tx, A, B), c -> Ending.COMMIT));

        assertEquals(Failure.LOCK_NOT_AVAILABLE, store.classify(failure));
        first.end();
        assertEquals(Map.of(key(B), done(B)), committed(A, B));
    }

    @Test
    void recordsSentWithTheCommitCommitThemAndTheWorksRows() {
        boolean committed = ended(tx -> insertRow(tx, "row-1").chain(() -> recordAndCommit(tx, A, B)));

        assertTrue(committed);

        assertEquals(Map.of(key(A), done(A), key(B), done(B)), committed(A, B));
        assertEquals(Set.of("row-1"), rows());
    }

    @Test
    void recordsSentWithTheCommitThatMeetAKeyCommittedMeanwhileCommitNothing() throws Exception {
        Holder first = Holder.recording(this, B);
        CompletableFuture<Boolean> second = store.transaction(UNBOUNDED,
                tx -> insertRow(tx, "row-2").chain(() -> recordAndCommit(tx, A, B, C)), c -> Ending.ENDED)
                .subscribeAsCompletionStage();
        until(this::aStatementWaits);

        first.end();

        assertFalse(second.get(10, TimeUnit.SECONDS));
        assertEquals(Map.of(key(B), done(B)), committed(A, B, C));
        assertEquals(Set.of(), rows());
        boolean again = ended(tx -> recordAndCommit(tx, B));
        assertFalse(again, "a key committed before meets its row at once");
    }

    @Test
    void aTransactionSeesItsOwnWritesAndAnothersOnlyOnceCommitted() {
        Holder first = Holder.recording(this, A);

        assertEquals(Map.of(key(C), done(C)), inTx(tx -> record(tx, C).chain(() -> store.findAll(tx, List.of(A, C)))));

        first.end();
        assertEquals(Map.of(key(A), done(A)), committed(A));
    }

    @Test
    void aRollbackDropsTheRecordsAndTheWorksRows() {
        store.transaction(UNBOUNDED, tx -> claim(tx, A).chain(() -> record(tx, B)).chain(() -> insertRow(tx, "row-1")),
                c -> Ending.ROLLBACK).await().indefinitely();
        assertThrows(IllegalStateException.class, () -> store.transaction(UNBOUNDED,
                tx -> record(tx, C).chain(() -> insertRow(tx, "row-2"))
                        .chain(() -> Uni.createFrom().failure(new IllegalStateException("the work failed"))),
                c -> Ending.COMMIT).await().indefinitely());

        assertEquals(Map.of(), committed(A, B, C));
        assertEquals(Set.of(), rows());
    }

    // --- the two-phase hold ---------------------------------------------------------------------

    @Test
    void aHangingRecordIsTakenOverOnce() {
        inTx(tx -> claim(tx, A));
        Lease seen = new Lease(A, null, LEASE, 1);
        Instant later = LEASE.plusSeconds(1);
        Instant until = later.plusSeconds(30);

        assertEquals(Optional.empty(), inTx(tx -> store.takeOver(tx, seen, until, LEASE.minusSeconds(1))));
        assertEquals(Optional.of(new Lease(A, PAYLOAD, until, 2)), inTx(tx -> store.takeOver(tx, seen, until, later)));
        assertEquals(Optional.empty(), inTx(tx -> store.takeOver(tx, seen, until, later)));
        assertEquals(new DedupRecord(A.scope(), A.key(), A.fingerprint(), DedupRecord.Status.PROCESSING, null, 2, until,
                NOW, later, EXPIRES), committed(A).get(key(A)));
    }

    @Test
    void confirmAndReleaseChangeTheRecordOnlyUnderItsCurrentHold() {
        inTx(tx -> claim(tx, A));
        Lease held = new Lease(A, PAYLOAD, LEASE, 1);
        Lease stale = new Lease(A, PAYLOAD, LEASE, 2);
        Instant retryAt = NOW.plusSeconds(60);
        JsonObject result = new JsonObject().put("paid", "yes");

        assertEquals(false, inTx(tx -> store.confirm(tx, stale, result, NOW)));
        assertEquals(true, inTx(tx -> store.release(tx, held, retryAt, "timed out", NOW)));
        assertEquals(false, inTx(tx -> store.confirm(tx, held, result, NOW)));
        Lease retried = new Lease(A, PAYLOAD, retryAt, 1);
        assertEquals(true, inTx(tx -> store.confirm(tx, retried, result, NOW)));
        assertEquals(false, inTx(tx -> store.release(tx, retried, null, "too late", NOW)));

        DedupRecord confirmed = committed(A).get(key(A));
        assertEquals(DedupRecord.Status.DONE, confirmed.status());
        assertEquals(result, confirmed.result());
        assertEquals(null, confirmed.leaseUntil());
    }

    @Test
    void aReleaseWithoutARetryFailsTheRecordForGood() {
        inTx(tx -> claim(tx, A));

        assertEquals(true, inTx(tx -> store.release(tx, new Lease(A, PAYLOAD, LEASE, 1), null, "refused", NOW)));

        DedupRecord failed = committed(A).get(key(A));
        assertEquals(DedupRecord.Status.FAILED, failed.status());
        assertEquals(null, failed.leaseUntil());
    }

    // --- what failures mean ---------------------------------------------------------------------

    @Test
    void aNulInATextIsInvalidData() {
        IdemRequest nul = new IdemRequest("orders", "a\u0000b", "f");

        assertEquals(Failure.INVALID_DATA, store.classify(failureOf(store.transaction(UNBOUNDED, tx -> claim(tx, nul), c -> Ending.COMMIT))));
        assertEquals(Failure.INVALID_DATA, store.classify(failureOf(store.transaction(UNBOUNDED, tx -> record(tx, nul), c -> Ending.COMMIT))));
    }

    @Test
    void theWorksOwnDuplicateIsAUniqueViolationAndAbortsItsTransaction() {
        inTx(tx -> insertRow(tx, "row-1"));
        CompletableFuture<Throwable> next = new CompletableFuture<>();

        Throwable failure = failureOf(store.transaction(UNBOUNDED, tx -> record(tx, A)
                .chain(() -> insertRow(tx, "row-1"))
                .onFailure().call(f -> record(tx, B).onItemOrFailure().invoke((item, f2) -> next.complete(f2))
                        .onFailure().recoverWithNull()),
                c -> Ending.COMMIT));

        assertEquals(Failure.UNIQUE_VIOLATION, store.classify(failure));
        assertEquals(Failure.OTHER, store.classify(next.join()), "a statement after a failed one fails");
        assertEquals(Map.of(), committed(A, B));
    }

    @Test
    void aStoreThatCannotBeReachedIsUnavailable() {
        DedupStore down = unreachable();

        assertEquals(Failure.UNAVAILABLE, down.classify(failureOf(down.transaction(UNBOUNDED, tx -> claim(tx, A), c -> Ending.COMMIT))));
    }

    // --- the test's means -----------------------------------------------------------------------

    /** A transaction that wrote a key and holds it until {@link #end}: commits then, or rolls back. */
    record Holder(CompletableFuture<Void> release, CompletableFuture<Object> ended) {

        static Holder claiming(DedupStoreContract test, IdemRequest request, boolean commit) {
            return hold(test, tx -> test.claim(tx, request), commit);
        }

        static Holder recording(DedupStoreContract test, IdemRequest request) {
            return hold(test, tx -> test.record(tx, request), true);
        }

        private static Holder hold(DedupStoreContract test, Function<SqlConnection, Uni<?>> write, boolean commit) {
            CompletableFuture<Void> wrote = new CompletableFuture<>();
            CompletableFuture<Void> release = new CompletableFuture<>();
            CompletableFuture<Object> ended = test.store.transaction(UNBOUNDED, tx -> write.apply(tx)
                            .invoke(() -> wrote.complete(null))
                            .call(() -> Uni.createFrom().completionStage(release)).map(Object.class::cast),
                    c -> Ending.commitIf(commit)).subscribeAsCompletionStage();
            CompletableFuture.anyOf(wrote, ended).join();
            assertFalse(ended.isDone(), "the holding transaction ended early");
            return new Holder(release, ended);
        }

        void end() {
            release.complete(null);
            ended.join();
        }
    }

    Uni<Claim> claim(SqlConnection tx, IdemRequest request) {
        return store.claim(tx, request, NOW, LEASE, EXPIRES, PAYLOAD);
    }

    Uni<Set<String>> record(SqlConnection tx, IdemRequest... requests) {
        List<IdemRequest> all = List.of(requests);
        return store.recordAll(tx, all, all.stream().map(r -> JsonText.encode(result(r))).toList(), NOW,
                all.stream().map(r -> EXPIRES).toList());
    }

    Uni<Boolean> recordAndCommit(SqlConnection tx, IdemRequest... requests) {
        List<IdemRequest> all = List.of(requests);
        return store.recordAllAndCommit(tx, all, all.stream().map(r -> JsonText.encode(result(r))).toList(), NOW,
                all.stream().map(r -> EXPIRES).toList());
    }

    /** A transaction whose body ends it. */
    <T> T ended(Function<SqlConnection, Uni<T>> body) {
        return store.transaction(UNBOUNDED, body, c -> Ending.ENDED).await().atMost(Duration.ofSeconds(10));
    }

    <T> T inTx(Function<SqlConnection, Uni<T>> body) {
        return store.transaction(UNBOUNDED, body, c -> Ending.COMMIT).await().atMost(Duration.ofSeconds(10));
    }

    <T> CompletableFuture<T> later(Optional<Duration> lockWait, Function<SqlConnection, Uni<T>> body) {
        return store.transaction(lockWait, body, c -> Ending.COMMIT).subscribeAsCompletionStage();
    }

    Map<String, DedupRecord> committed(IdemRequest... requests) {
        return store.transaction(UNBOUNDED, tx -> store.findAll(tx, List.of(requests)), c -> Ending.ROLLBACK)
                .await().atMost(Duration.ofSeconds(10));
    }

    static Throwable failureOf(Uni<?> uni) {
        try {
            uni.await().atMost(Duration.ofSeconds(10));
        } catch (CompletionException failure) {
            return failure.getCause();
        } catch (RuntimeException failure) {
            return failure;
        }
        return fail("no failure");
    }

    static void until(BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("not within 10 s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    static String key(IdemRequest request) {
        return DedupStore.batchKey(request);
    }

    static JsonObject result(IdemRequest request) {
        return new JsonObject().put("key", request.key());
    }

    static DedupRecord done(IdemRequest r) {
        return new DedupRecord(r.scope(), r.key(), r.fingerprint(), DedupRecord.Status.DONE, result(r), 1, null, NOW, NOW,
                EXPIRES);
    }

    static DedupRecord processing(IdemRequest r, int attempts, Instant leaseUntil) {
        return new DedupRecord(r.scope(), r.key(), r.fingerprint(), DedupRecord.Status.PROCESSING, null, attempts,
                leaseUntil, NOW, NOW, EXPIRES);
    }
}
