package dev.idem.web;

import io.vertx.core.json.jackson.JacksonCodec;
import io.vertx.core.json.JsonObject;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * JSON answers written from the stored snapshot as they are: no second mapping on the way out.
 * Jackson's streaming generator: {@code JsonObject.encode()} would go through the databind
 * ObjectMapper, which resolves serializers on every call.
 */
public final class Json {

    private static final JacksonCodec STREAMING = new JacksonCodec();

    private Json() {}

    public static Response.ResponseBuilder status(int status, JsonObject body) {
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(STREAMING.toString(body, false));
    }

    public static Response ok(JsonObject body) {
        return status(200, body).build();
    }
}
