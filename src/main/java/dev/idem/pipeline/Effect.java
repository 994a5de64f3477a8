package dev.idem.pipeline;

import io.vertx.core.json.JsonObject;

/**
 * What the business work reports back to the pipeline, from inside the transaction. Everything
 * but {@link Refused} is final and is stored as the key's result; {@link Refused} rolls back.
 */
public sealed interface Effect {

    /** The state changed now. */
    record Applied(JsonObject result) implements Effect {}

    /** The state was already where this delivery would move it, for the same cause. */
    record AlreadyApplied(JsonObject result) implements Effect {}

    /** The delivery contradicts the state; it was recorded for people to resolve. */
    record Anomalous(String kind, JsonObject result) implements Effect {}

    /** Nothing to apply it to (yet): no record is kept, so a retry is judged afresh. */
    record Refused(String reason, String detail) implements Effect {}
}
