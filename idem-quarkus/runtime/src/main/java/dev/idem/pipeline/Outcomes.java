package dev.idem.pipeline;

import dev.idem.pipeline.DedupCache.PreCheck;
import io.vertx.core.json.JsonObject;
import java.util.Optional;

/**
 * How what a delivery meets becomes its outcome: the answer the cache held, the row another
 * delivery committed, or the effect of its own work. One set of rules for single and batched
 * deliveries; the pipeline is the only place outcomes are made.
 */
final class Outcomes {

    /**
     * The one member of a stored answer that is a refusal of the work's:
     * {@code {"idem.refusal": {"reason", "detail", "result"}}}. Stored as DONE like any answer, so
     * that the cache, archiving and reconciliation treat it as one.
     */
    static final String REFUSAL = "idem.refusal";

    /**
     * The member of a stored answer that names the trace of the delivery that did the work, where
     * it was traced: kept in the same write as the answer, and given to its duplicates' spans.
     */
    static final String TRACE = "idem.trace_id";

    private Outcomes() {}

    /** DONE in the cache: a duplicate, or the key reused with other content. */
    static Outcome ofCache(IdemRequest request, PreCheck.Done done) {
        return done.fingerprint().equals(request.fingerprint())
                ? answered(Layer.REDIS, done.result())
                : new Outcome.KeyReused();
    }

    /** The key's answer, stored by its first delivery and found by {@code layer}: a result, or a refusal. */
    static Outcome answered(Layer layer, JsonObject stored) {
        Optional<String> firstTrace = firstTrace(stored);
        if (firstTrace.isPresent()) {
            stored = stored.copy();
            stored.remove(TRACE);
        }
        if (stored.size() == 1 && stored.getValue(REFUSAL) instanceof JsonObject refusal) {
            return new Outcome.Rejected(refusal.getString("reason"), refusal.getString("detail"),
                    refusal.getValue("result") instanceof JsonObject result ? result : new JsonObject(),
                    Optional.of(layer));
        }
        return new Outcome.Duplicate(layer, stored, firstTrace);
    }

    /** The trace id kept with a stored answer, if its first delivery was traced. */
    static Optional<String> firstTrace(JsonObject stored) {
        return stored != null && stored.getValue(TRACE) instanceof String trace ? Optional.of(trace) : Optional.empty();
    }

    /** A committed row that another delivery wrote: same payload or not, finished or not. */
    static Outcome ofExisting(IdemRequest request, DedupRecord existing, Outcome inFlight) {
        if (!existing.fingerprint().equals(request.fingerprint())) {
            return new Outcome.KeyReused();
        }
        return switch (existing.status()) {
            case DONE -> answered(Layer.DB, existing.result());
            case PROCESSING -> inFlight;
            case FAILED -> failedForGood();
        };
    }

    /** The outcome of a delivery whose work ran with {@code effect}. */
    static Outcome ofEffect(Effect effect) {
        return effect.accept(OF_EFFECT);
    }

    /**
     * What the key keeps as its answer after {@code effect}, with the {@code trace} of the delivery
     * that did the work (null: not traced); for a refusal, null unless it is to be stored and
     * {@code refusals} (its scope stores them): then nothing is kept, and a retry is judged afresh.
     */
    static JsonObject stored(Effect effect, boolean refusals, String trace) {
        JsonObject stored;
        if (effect instanceof Effect.Rejected refused) {
            if (!kept(refused, refusals)) {
                return null;
            }
            stored = new JsonObject().put(REFUSAL, new JsonObject()
                    .put("reason", refused.reason())
                    .put("detail", refused.detail())
                    .put("result", refused.result()));
        } else {
            stored = effect.accept(RESULT);
        }
        return trace == null ? stored : stored.copy().put(TRACE, trace);
    }

    /** Whether {@code refused} is its key's answer: it is to be stored, and its scope stores {@code refusals}. */
    static boolean kept(Effect.Rejected refused, boolean refusals) {
        return refusals && refused.stored();
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
        public Outcome rejected(Effect.Rejected e) {
            return new Outcome.Rejected(e.reason(), e.detail(), e.result(), Optional.empty());
        }
    };

    private static final Effect.Cases<JsonObject> RESULT = new Effect.Cases<>() {
        public JsonObject processed(Effect.Processed e) { return e.result(); }
        public JsonObject duplicate(Effect.Duplicate e) { return e.result(); }
        public JsonObject anomaly(Effect.Anomaly e) { return e.result(); }
        public JsonObject rejected(Effect.Rejected e) { return e.result(); }
    };
}
