package dev.idem.pipeline;

import io.vertx.core.json.JsonObject;

/**
 * What the business work reports back to the pipeline, from inside the transaction. Everything
 * but {@link Refused} is final and is stored as the key's result; {@link Refused} keeps no record.
 * The pipeline reads it through {@link Cases}, so a new case cannot be forgotten.
 */
public sealed interface Effect {

    /** The state changed now. */
    record Applied(JsonObject result) implements Effect {
        /** What {@code cases} makes of this effect. */
        public <T> T accept(Cases<T> cases) {
            return cases.applied(this);
        }
    }

    /** The state was already where this delivery would move it, for the same cause. */
    record AlreadyApplied(JsonObject result) implements Effect {
        /** What {@code cases} makes of this effect. */
        public <T> T accept(Cases<T> cases) {
            return cases.alreadyApplied(this);
        }
    }

    /** The delivery contradicts the state; it was recorded for people to resolve. */
    record Anomalous(String kind, JsonObject result) implements Effect {
        /** What {@code cases} makes of this effect. */
        public <T> T accept(Cases<T> cases) {
            return cases.anomalous(this);
        }
    }

    /**
     * Nothing to apply it to (yet): no record is kept, so a retry is judged afresh. The work must
     * leave the transaction as it found it: it may share it with other deliveries.
     */
    record Refused(String reason, String detail) implements Effect {
        /** What {@code cases} makes of this effect. */
        public <T> T accept(Cases<T> cases) {
            return cases.refused(this);
        }
    }

    /** The state changed now, with nothing to remember but that it did. */
    static Effect applied() {
        return new Applied(new JsonObject());
    }

    /** The state was already where this delivery would move it, with nothing to remember. */
    static Effect alreadyApplied() {
        return new AlreadyApplied(new JsonObject());
    }

    /** The state changed now; {@code result} is what duplicates are answered with. */
    static Effect applied(JsonObject result) {
        return new Applied(result);
    }

    /** What {@code cases} makes of this effect: the case of {@code cases} for its kind. */
    <T> T accept(Cases<T> cases);

    /** One case per kind of effect: a switch the compiler checks for completeness. */
    interface Cases<T> {
        /** The case of {@link Applied}. */
        T applied(Applied effect);

        /** The case of {@link AlreadyApplied}. */
        T alreadyApplied(AlreadyApplied effect);

        /** The case of {@link Anomalous}. */
        T anomalous(Anomalous effect);

        /** The case of {@link Refused}. */
        T refused(Refused effect);
    }
}
