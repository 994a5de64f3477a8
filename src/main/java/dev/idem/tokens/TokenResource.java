package dev.idem.tokens;

import dev.idem.web.Json;
import dev.idem.web.Problem;
import dev.idem.web.UserIdFilter;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;

@Path("/api/tokens")
@Produces(MediaType.APPLICATION_JSON)
public class TokenResource {

    private final TokenStore tokens;

    TokenResource(TokenStore tokens) {
        this.tokens = tokens;
    }

    /** A one-time submit token for the calling user, for one {@code POST /api/orders}. */
    @POST
    public Uni<Response> issue(@HeaderParam(UserIdFilter.HEADER) String userId) {
        return tokens.issue(userId).map(issued -> issued
                .map(token -> Json.status(201, new JsonObject()
                        .put("token", token)
                        .put("expiresInSeconds", tokens.ttl().toSeconds())).build())
                .orElseGet(() -> unavailable()));
    }

    public static Response unavailable() {
        return Problem.retryLater(503, "TOKEN_STORE_UNAVAILABLE",
                "one-time tokens are unavailable; retry later or send an Idempotency-Key", Duration.ofSeconds(1));
    }
}
