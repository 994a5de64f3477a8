package dev.idem.pipeline;

import dev.idem.pipeline.DedupCache.PreCheck;
import io.vertx.core.json.JsonObject;

/**
 * How what a delivery meets becomes its outcome: the answer the cache held, the row another
 * delivery committed, or the effect of its own work. One set of rules for single and batched
 * deliveries; the pipeline is the only place outcomes are made.
 */
final class Outcomes {

    private Outcomes() {}

    /** DONE in the cache: a duplicate, or the key reused with other content. */
    static Outcome ofCache(IdemRequest request, PreCheck.Done done) {
        return done.fingerprint().equals(request.fingerprint())
                ? new Outcome.Duplicate(Layer.REDIS, done.result())
                : new Outcome.KeyReused();
    }

    /** A committed row that another delivery wrote: same payload or not, finished or not. */
    static Outcome ofExisting(IdemRequest request, DedupRecord existing, Outcome inFlight) {
        if (!existing.fingerprint().equals(request.fingerprint())) {
            return new Outcome.KeyReused();
        }
        return switch (existing.status()) {
            case DONE -> new Outcome.Duplicate(Layer.DB, existing.result());
            case PROCESSING -> inFlight;
            case FAILED -> failedForGood();
        };
    }

    /** The outcome of a delivery whose work ran with {@code effect}. */
    static Outcome ofEffect(Effect effect) {
        return effect.accept(OF_EFFECT);
    }

    /** What the key keeps as its result after {@code effect}; null when nothing is kept (refused). */
    static JsonObject stored(Effect effect) {
        return effect.accept(STORED);
    }

    static Outcome inFlight(PipelineConfig config) {
        return new Outcome.InFlight(config.inFlightRetryAfter());
    }

    /** A delivery whose statement the database refused for its data, alone: the same every time. */
    static Outcome invalidData(Throwable failure) {
        return new Outcome.Rejected(Outcome.Rejected.INVALID_DATA,
                "the database refused this delivery's data: " + failure.getMessage());
    }

    /** A work that broke a unique constraint of its own tables, with no record of its key behind it. */
    static Outcome uniqueViolation(Throwable failure) {
        return new Outcome.Rejected(Outcome.Rejected.UNIQUE_VIOLATION, "the work broke a unique constraint of its "
                + "tables and the key has no record: the change was made under another key (or this key's record "
                + "was archived): " + failure.getMessage());
    }

    static Outcome failedForGood() {
        return new Outcome.Rejected("FAILED", "the work for this key failed for good");
    }

    private static final Effect.Cases<Outcome> OF_EFFECT = new Effect.Cases<>() {
        public Outcome processed(Effect.Processed e) { return new Outcome.Processed(e.result()); }
        public Outcome duplicate(Effect.Duplicate e) { return new Outcome.Duplicate(Layer.STATE, e.result()); }
        public Outcome anomaly(Effect.Anomaly e) { return new Outcome.Anomaly(e.kind(), e.result()); }
        public Outcome rejected(Effect.Rejected e) { return new Outcome.Rejected(e.reason(), e.detail()); }
    };

    private static final Effect.Cases<JsonObject> STORED = new Effect.Cases<>() {
        public JsonObject processed(Effect.Processed e) { return e.result(); }
        public JsonObject duplicate(Effect.Duplicate e) { return e.result(); }
        public JsonObject anomaly(Effect.Anomaly e) { return e.result(); }
        public JsonObject rejected(Effect.Rejected e) { return null; }
    };
}
