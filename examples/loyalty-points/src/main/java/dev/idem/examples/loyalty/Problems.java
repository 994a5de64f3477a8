package dev.idem.examples.loyalty;

import io.vertx.core.json.JsonObject;
import jakarta.ws.rs.core.Response;
import java.time.Duration;

/** RFC 9457 problem details with a {@code code} member: the one error shape of the API. */
final class Problems {

    static final String MEDIA_TYPE = "application/problem+json";

    private Problems() {}

    static Response response(int status, String code, String detail) {
        Response.StatusType known = Response.Status.fromStatusCode(status);
        JsonObject problem = new JsonObject()
                .put("type", "about:blank")
                .put("title", known != null ? known.getReasonPhrase() : String.valueOf(status))
                .put("status", status)
                .put("detail", detail)
                .put("code", code);
        return Response.status(status).type(MEDIA_TYPE).entity(problem.encode()).build();
    }

    static Response badRequest(String detail) {
        return response(400, "BAD_REQUEST", detail);
    }

    static Response retryLater(int status, String code, String detail, Duration retryAfter) {
        return Response.fromResponse(response(status, code, detail))
                .header("Retry-After", Math.max(1, (retryAfter.toMillis() + 999) / 1000))
                .build();
    }
}
