package dev.idem.extension.it;

import io.vertx.core.json.JsonObject;
import jakarta.ws.rs.core.Response;

/** The application's own error answers, in the extension's shape: RFC 9457 problem+json with a code. */
final class Problems {

    private Problems() {}

    static Response problem(int status, String code, String detail) {
        JsonObject problem = new JsonObject()
                .put("type", "about:blank")
                .put("title", Response.Status.fromStatusCode(status).getReasonPhrase())
                .put("status", status)
                .put("detail", detail)
                .put("code", code);
        return Response.status(status).type("application/problem+json").entity(problem.encode()).build();
    }
}
