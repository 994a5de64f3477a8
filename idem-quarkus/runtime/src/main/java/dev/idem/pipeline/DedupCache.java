package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Optional;

/**
 * The pipeline's first layer, a cache in front of the store: one round trip that claims a key and
 * tells what was there, and DONE once the store committed. It is never the source of truth: every
 * failure or slow answer reads as "ask the store" (counted), and no call ever fails. Redis in
 * production ({@link RedisCache}); an in-memory one in the unit tests.
 */
interface DedupCache {

    /** What the pre-check found. */
    sealed interface PreCheck {
        /** Nothing was there; this delivery now holds the PROCESSING marker. */
        record Claimed() implements PreCheck {}

        /** Another delivery marked the key PROCESSING; only the store can tell more. */
        record Processing() implements PreCheck {}

        /** The work is done: its fingerprint and stored result. */
        record Done(String fingerprint, JsonObject result) implements PreCheck {}

        /** The cache failed or was too slow; the layer is skipped. */
        record Unavailable() implements PreCheck {}
    }

    /** Claims each of {@code requests}' keys and answers what was there, in one call; the answers in their order. */
    Uni<List<PreCheck>> preCheckAll(List<IdemRequest> requests);

    /**
     * The keys are DONE with their {@code results} (encoded JSON), in one call; only ever after the
     * store committed them.
     */
    Uni<Void> markDoneAll(List<IdemRequest> requests, List<String> results);

    /**
     * Gives back the PROCESSING claims of {@code requests}, whose deliveries kept no record (refused,
     * or their transaction failed): the next delivery of such a key is then claimed afresh rather
     * than looked up in the store.
     */
    Uni<Void> release(List<IdemRequest> requests);

    /** What the cache holds for a key, for people reading its trail; empty when nothing or unreachable. */
    Uni<Optional<String>> peek(String scope, String key);

    /** Drops whatever the cache holds for a key. */
    Uni<Void> forget(String scope, String key);

    /** A key the cache holds as DONE. */
    record Mark(String scope, String key) {}

    /**
     * Up to {@code limit} of the keys the cache holds as DONE, for reconciliation to hold against
     * the store: a DONE mark is written only after its record committed, so a mark without a record
     * is a commit that was acknowledged and then lost (a failover to a standby that had not
     * received it). Fails when the cache cannot be read.
     */
    Uni<List<Mark>> doneMarks(int limit);
}
