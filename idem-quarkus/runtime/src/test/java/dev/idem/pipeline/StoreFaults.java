package dev.idem.pipeline;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * What other processes do to an {@link InMemoryDatabase} while the pipeline's transactions run,
 * and statements that fail: a test arranges them here (as {@code db.faults}), and the store meets
 * each at the step it names. A store nobody arranged anything for behaves as {@link PgDedupStore}
 * does with no one else about.
 */
final class StoreFaults {

    /** The end of a transaction that never ends: another's, holding a key ({@link #lockedByAnother}). */
    static final CompletableFuture<Void> NEVER = new CompletableFuture<>();

    private final InMemoryDatabase db;
    private final Map<String, DedupRecord> winners = new HashMap<>();
    private final Map<String, Integer> vanishing = new HashMap<>();
    private final Set<String> locked = new HashSet<>();
    private final Set<String> failingRows = new HashSet<>();
    private final Set<String> refusedRows = new HashSet<>();
    private final Set<String> racedTakeOvers = new HashSet<>();
    private boolean down;
    private boolean downOnRecord;
    private CompletableFuture<Void> nextEndGate;

    StoreFaults(InMemoryDatabase db) {
        this.db = db;
    }

    // --- what a test arranges ------------------------------------------------------------------

    /**
     * Another delivery commits {@code record} while a transaction of the pipeline runs: right
     * before that transaction inserts the key (its record or its claim).
     */
    synchronized void commitsMeanwhile(DedupRecord record) {
        winners.put(DedupStore.batchKey(record.scope(), record.key()), record);
    }

    /**
     * The next {@code times} inserts of the key (records or claims) meet a row that is gone when
     * looked up (committed by another delivery, then archived).
     */
    synchronized void vanishesMeanwhile(String scope, String key, int times) {
        vanishing.put(DedupStore.batchKey(scope, key), times);
    }

    /**
     * Another transaction holds the key and never ends: a write of the key waits for it until its
     * transaction's lock wait is over (one without a lock wait would wait forever).
     */
    synchronized void lockedByAnother(String scope, String key) {
        locked.add(DedupStore.batchKey(scope, key));
    }

    /** Every write of the business row {@code name} fails, as a statement of one delivery. */
    synchronized void failWritesOf(String name) {
        failingRows.add(name);
    }

    /** The business statement writing {@code name} is refused for its data, every time. */
    synchronized void refuseDataOf(String name) {
        refusedRows.add(name);
    }

    /** Another process takes over the key's hanging record right before the next takeover of it. */
    synchronized void takenOverFirstByAnother(String scope, String key) {
        racedTakeOvers.add(DedupStore.batchKey(scope, key));
    }

    /** The store refuses every connection and statement from now on. */
    synchronized void goDown() {
        down = true;
    }

    /** The store is back, with what had committed before it went down. */
    synchronized void comeBack() {
        down = false;
        downOnRecord = false;
    }

    /** The next record insert finds the store gone, and it stays down. */
    synchronized void goDownOnRecord() {
        downOnRecord = true;
    }

    /** The next transaction holds its end (commit or rollback) until the answer is completed. */
    synchronized CompletableFuture<Void> holdNextEnd() {
        nextEndGate = new CompletableFuture<>();
        return nextEndGate;
    }

    // --- where the store meets them ------------------------------------------------------------

    /** Whether the store is down: no transaction begins, no statement runs, none ends. */
    synchronized boolean down() {
        return down;
    }

    /** The end of the transaction beginning now waits for this, if anything. */
    synchronized CompletableFuture<Void> endGate() {
        CompletableFuture<Void> gate = nextEndGate;
        nextEndGate = null;
        return gate;
    }

    /** Whether a transaction that never ends holds {@code key}. */
    synchronized boolean lockedByAnother(String key) {
        return locked.contains(key);
    }

    /** Before a statement writes business row {@code name}: fails it if arranged. */
    synchronized void writing(String name) {
        if (failingRows.contains(name)) {
            throw InMemoryDatabase.failure("P0001", "cannot write " + name);
        }
        if (refusedRows.contains(name)) {
            throw InMemoryDatabase.failure("22021", "invalid byte sequence in " + name);
        }
    }

    /** Before a statement inserts records. */
    synchronized void recording() {
        if (downOnRecord) {
            downOnRecord = false;
            down = true;
            throw InMemoryDatabase.failure("08006", "connection reset while writing the records");
        }
    }

    /**
     * Before {@code key}'s record or claim is inserted: a winner waiting to commit commits now.
     * True when the insert meets a row that is gone once looked up.
     */
    synchronized boolean inserting(String key) {
        DedupRecord winner = winners.remove(key);
        if (winner != null) {
            db.seed(winner, null);
        }
        Integer times = vanishing.remove(key);
        if (times != null && times > 1) {
            vanishing.put(key, times - 1);
        }
        return times != null;
    }

    /** Before {@code key}'s hanging record is taken over: another process may be first. */
    synchronized void takingOver(String key, Instant now) {
        if (racedTakeOvers.remove(key)) {
            InMemoryDatabase.Stored other = db.committedRecords().get(key);
            DedupRecord r = other.record();
            db.seed(new DedupRecord(r.scope(), r.key(), r.fingerprint(), r.status(), r.result(), r.attempts() + 1,
                    now.plus(Duration.ofMinutes(1)), r.createdAt(), now, r.expiresAt()), other.payload());
        }
    }
}
