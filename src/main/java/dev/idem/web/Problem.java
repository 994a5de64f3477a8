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

    /** The code of an error the framework raised, where only its status is known. */
    public static String codeOf(int status) {
        return switch (status) {
            case 400 -> "BAD_REQUEST";
            case 401 -> "UNAUTHORIZED";
            case 404 -> "NOT_FOUND";
            case 405 -> "METHOD_NOT_ALLOWED";
            case 406 -> "NOT_ACCEPTABLE";
            case 413 -> "PAYLOAD_TOO_LARGE";
            case 414 -> "URI_TOO_LONG";
            case 415 -> "UNSUPPORTED_MEDIA_TYPE";
            case 431 -> "HEADERS_TOO_LARGE";
            default -> status >= 500 ? "INTERNAL_ERROR" : "BAD_REQUEST";
        };
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
