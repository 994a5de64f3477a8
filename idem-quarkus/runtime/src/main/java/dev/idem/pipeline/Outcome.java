package dev.idem.pipeline;

import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Optional;

/**
 * What became of one delivery. Every entry point maps each case to its own answer (an HTTP
 * response, a Kafka acknowledgement) through {@link Cases}, so a new case cannot be forgotten.
 */
public sealed interface Outcome {

    /** The work ran now, for the first time; {@code result} is what was stored for duplicates. */
    record Processed(JsonObject result) implements Outcome {
        /** What {@code cases} makes of this outcome. */
        public <T> T accept(Cases<T> cases) {
            return cases.processed(this);
        }
    }

    /**
     * The work had already been done; {@code result} is the first delivery's, and
     * {@code firstTraceId} the trace of the delivery that did it, when that one was traced.
     */
    record Duplicate(Layer layer, JsonObject result, Optional<String> firstTraceId) implements Outcome {

        /** A duplicate whose first delivery's trace is not known. */
        public Duplicate(Layer layer, JsonObject result) {
            this(layer, result, Optional.empty());
        }

        /** What {@code cases} makes of this outcome. */
        public <T> T accept(Cases<T> cases) {
            return cases.duplicate(this);
        }
    }

    /** Another delivery with this key is being worked on; come back after {@code retryAfter}. */
    record InFlight(Duration retryAfter) implements Outcome {
        /** What {@code cases} makes of this outcome. */
        public <T> T accept(Cases<T> cases) {
            return cases.inFlight(this);
        }
    }

    /** The key was used before with a different payload. */
    record KeyReused() implements Outcome {
        /** What {@code cases} makes of this outcome. */
        public <T> T accept(Cases<T> cases) {
            return cases.keyReused(this);
        }
    }

    /** The delivery was recorded but could not be applied: a person has to look at it. */
    record Anomaly(String kind, JsonObject result) implements Outcome {
        /** What {@code cases} makes of this outcome. */
        public <T> T accept(Cases<T> cases) {
            return cases.anomaly(this);
        }
    }

    /**
     * The delivery was refused. By its work ({@link Effect.Rejected}): that refusal is the key's
     * answer, stored with its record, and a later delivery of the key gets it again,
     * {@link #replayed()} by the layer that found it, whatever changed meanwhile. By the database,
     * as {@link #INVALID_DATA} or {@link #UNIQUE_VIOLATION}: nothing is stored, and the same delivery
     * would be refused the same way again.
     *
     * @param result what the work answered with its refusal (a REST answer, say); empty when none
     * @param replayedBy the layer that answered with the key's stored refusal; empty for this delivery's own
     */
    record Rejected(String reason, String detail, JsonObject result, Optional<Layer> replayedBy) implements Outcome {

        /**
         * The database refused the delivery's own data (a NUL in a text, a number out of range, a
         * NOT NULL or CHECK constraint of the work's tables).
         */
        public static final String INVALID_DATA = "INVALID_DATA";

        /**
         * The work broke a unique constraint of its own tables and the key has no record: the same
         * change was made under another key, or this key's record was archived. Retrying cannot
         * change it. (When the key has a record, the delivery is judged by it instead.)
         */
        public static final String UNIQUE_VIOLATION = "UNIQUE_VIOLATION";

        /** A refusal of this delivery's own, with nothing to answer but its reason and detail. */
        public Rejected(String reason, String detail) {
            this(reason, detail, new JsonObject(), Optional.empty());
        }

        /** Whether this is the key's first answer given again, rather than this delivery's own refusal. */
        public boolean replayed() {
            return replayedBy.isPresent();
        }

        /** What {@code cases} makes of this outcome. */
        public <T> T accept(Cases<T> cases) {
            return cases.rejected(this);
        }
    }

    /** What {@code cases} makes of this outcome: the case of {@code cases} for its kind. */
    <T> T accept(Cases<T> cases);

    /** The name under which the outcome is counted: PROCESSED, DUPLICATE, IN_FLIGHT, ... */
    default String name() {
        return accept(NAMES);
    }

    /** One case per kind of outcome: a switch the compiler checks for completeness. */
    interface Cases<T> {
        /** The case of {@link Processed}. */
        T processed(Processed outcome);

        /** The case of {@link Duplicate}. */
        T duplicate(Duplicate outcome);

        /** The case of {@link InFlight}. */
        T inFlight(InFlight outcome);

        /** The case of {@link KeyReused}. */
        T keyReused(KeyReused outcome);

        /** The case of {@link Anomaly}. */
        T anomaly(Anomaly outcome);

        /** The case of {@link Rejected}. */
        T rejected(Rejected outcome);
    }

    Cases<String> NAMES = new Cases<>() {
        public String processed(Processed o) { return "PROCESSED"; }
        public String duplicate(Duplicate o) { return "DUPLICATE"; }
        public String inFlight(InFlight o) { return "IN_FLIGHT"; }
        public String keyReused(KeyReused o) { return "KEY_REUSED"; }
        public String anomaly(Anomaly o) { return "ANOMALY"; }
        public String rejected(Rejected o) { return "REJECTED"; }
    };
}
