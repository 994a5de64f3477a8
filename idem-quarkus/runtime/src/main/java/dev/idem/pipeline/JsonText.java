package dev.idem.pipeline;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.jackson.JacksonCodec;

/**
 * Stored results to and from JSON text with Jackson's streaming parser and generator. In Quarkus,
 * {@code new JsonObject(text)} and {@code encode()} go through the databind ObjectMapper, which
 * resolves types and serializers on every call: on the duplicate path, whose answer is a stored
 * result read from Redis and written back out, that was a measurable share of the work.
 */
final class JsonText {

    private static final JacksonCodec STREAMING = new JacksonCodec();

    private JsonText() {}

    /** The JSON object {@code text} holds; {@link DecodeException} when it holds anything else. */
    static JsonObject decode(String text) {
        Object decoded = STREAMING.fromString(text);
        if (decoded instanceof JsonObject object) {
            return object;
        }
        throw new DecodeException("not a JSON object: " + (decoded == null ? "null" : decoded.getClass().getSimpleName()));
    }

    static String encode(JsonObject json) {
        return STREAMING.toString(json, false);
    }
}
