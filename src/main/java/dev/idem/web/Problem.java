package dev.idem.web;

import io.vertx.core.json.JsonObject;
import jakarta.ws.rs.core.Response;
import java.time.Duration;

/**
 * RFC 9457 problem details with the extra member {@code code}, the one error shape of the API.
 * {@code type} stays {@code about:blank}: the status says the class of error, {@code code} the case.
 */
public record Problem(int status, String code, String detail) {

    public static final String MEDIA_TYPE = "application/problem+json";

    public static Response response(int status, String code, String detail) {
        return new Problem(status, code, detail).toResponse();
    }

    public static Response badRequest(String detail) {
        return response(400, "BAD_REQUEST", detail);
    }

    public static Response retryLater(int status, String code, String detail, Duration retryAfter) {
        return Response.fromResponse(response(status, code, detail))
                .header("Retry-After", Math.max(1, (retryAfter.toMillis() + 999) / 1000))
                .build();
    }

    public JsonObject toJson() {
        Response.Status.Family family = Response.Status.Family.familyOf(status);
        Response.StatusType known = Response.Status.fromStatusCode(status);
        String title = known != null ? known.getReasonPhrase() : family.name();
        return new JsonObject()
                .put("type", "about:blank")
                .put("title", title)
                .put("status", status)
                .put("detail", detail)
                .put("code", code);
    }

    public Response toResponse() {
        return Response.status(status).type(MEDIA_TYPE).entity(toJson().encode()).build();
    }
}
