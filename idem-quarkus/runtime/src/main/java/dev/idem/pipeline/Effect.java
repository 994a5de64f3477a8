package dev.idem.pipeline;

import io.vertx.core.json.JsonObject;

/**
 * What the business work reports back to the pipeline, from inside the transaction. Everything
 * but {@link Rejected} is final and is stored as the key's result; {@link Rejected} keeps no record.
 * The pipeline reads it through {@link Cases}, so a new case cannot be forgotten.
 */
public sealed interface Effect {

    /** The state changed now. */
    record Processed(JsonObject result) implements Effect {
        /** What {@code cases} makes of this effect. */
        public <T> T accept(Cases<T> cases) {
            return cases.processed(this);
        }
    }

    /** The state was already where this delivery would move it, for the same cause. */
    record Duplicate(JsonObject result) implements Effect {
        /** What {@code cases} makes of this effect. */
        public <T> T accept(Cases<T> cases) {
            return cases.duplicate(this);
        }
    }

    /** The delivery contradicts the state; it was recorded for people to resolve. */
    record Anomaly(String kind, JsonObject result) implements Effect {
        /** What {@code cases} makes of this effect. */
        public <T> T accept(Cases<T> cases) {
            return cases.anomaly(this);
        }
    }

    /**
     * Nothing to apply it to (yet): no record is kept, so a retry is judged afresh. The work must
     * leave the transaction as it found it: it may share it with other deliveries.
     */
    record Rejected(String reason, String detail) implements Effect {
        /** What {@code cases} makes of this effect. */
        public <T> T accept(Cases<T> cases) {
            return cases.rejected(this);
        }
    }

    /** The state changed now, with nothing to remember but that it did. */
    static Effect processed() {
        return new Processed(new JsonObject());
    }

    /** The state was already where this delivery would move it, with nothing to remember. */
    static Effect duplicate() {
        return new Duplicate(new JsonObject());
    }

    /** The state changed now; {@code result} is what duplicates are answered with. */
    static Effect processed(JsonObject result) {
        return new Processed(result);
    }

    /** What {@code cases} makes of this effect: the case of {@code cases} for its kind. */
    <T> T accept(Cases<T> cases);

    /** One case per kind of effect: a switch the compiler checks for completeness. */
    interface Cases<T> {
        /** The case of {@link Processed}. */
        T processed(Processed effect);

        /** The case of {@link Duplicate}. */
        T duplicate(Duplicate effect);

        /** The case of {@link Anomaly}. */
        T anomaly(Anomaly effect);

        /** The case of {@link Rejected}. */
        T rejected(Rejected effect);
    }
}
