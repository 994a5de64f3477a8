package dev.idem.pipeline;

import io.vertx.core.json.JsonObject;

/**
 * What the business work reports back to the pipeline, from inside the transaction. Each is the
 * key's answer: stored with its record and given again to every later delivery of the key. The
 * pipeline reads it through {@link Cases}, so a new case cannot be forgotten.
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
     * The work refuses the delivery (a balance too short, an account unknown): what it wrote rolls
     * back, and the refusal is the key's answer, stored and given again to every later delivery of
     * the key, however the world changed meanwhile. {@code result} is what the refusal is answered
     * with (a REST answer, say); empty when there is nothing but the reason.
     *
     * <p>Not {@code stored} ({@link #forNow}), or in a scope with {@code store-refusals=false}, it
     * refuses this delivery only: nothing is kept, and the next delivery of the key runs the work
     * again.
     */
    record Rejected(String reason, String detail, JsonObject result, boolean stored) implements Effect {

        /** A refusal that is the key's answer, with nothing to answer but its reason and detail. */
        public Rejected(String reason, String detail) {
            this(reason, detail, new JsonObject(), true);
        }

        /**
         * A refusal of this delivery only, not of its key: what the delivery names is not there
         * yet (an order another instance is still creating, say), and a later delivery may find it.
         */
        public static Rejected forNow(String reason, String detail) {
            return new Rejected(reason, detail, new JsonObject(), false);
        }

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

    /** The work refuses the delivery, and that is the key's answer: {@link Rejected}. */
    static Effect rejected(String reason, String detail) {
        return new Rejected(reason, detail);
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
