package dev.idem.web;

import dev.idem.support.JsonText;
import io.vertx.core.json.JsonObject;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/** JSON answers written from the stored snapshot as they are: no second mapping on the way out. */
public final class Json {

    private Json() {}

    public static Response.ResponseBuilder status(int status, JsonObject body) {
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(JsonText.encode(body));
    }

    public static Response ok(JsonObject body) {
        return status(200, body).build();
    }
}
