package dev.idem.examples.loyalty;

import dev.idem.pipeline.StrictJson;
import dev.idem.pipeline.StrictJson.Parsed;
import dev.idem.pipeline.rest.Idempotent;
import dev.idem.pipeline.rest.ProblemAnswers;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;

@Path("/points")
@Produces(MediaType.APPLICATION_JSON)
public class PointsResource {

    static final String USER_HEADER = "X-User-Id";

    private final PointsService points;
    private final StrictJson json;

    PointsResource(PointsService points, StrictJson json) {
        this.points = points;
        this.json = json;
    }

    /**
     * Redeems once per (user, Idempotency-Key): the extension replays the answer, refuses a reused
     * key, answers a concurrent copy 409. Too few points (409) is the key's answer too, replayed
     * after points arrive; bad input (400) keeps the key free for a corrected request.
     */
    @POST
    @Path("/redemptions")
    @Idempotent(scope = PointsService.REDEMPTION_SCOPE)
    public Uni<Response> redeem(@HeaderParam(USER_HEADER) String userId, @HeaderParam("Idempotency-Key") String key,
                                byte[] body, SqlConnection tx) {
        if (!UserIds.valid(userId)) {
            return answer(badRequest(USER_HEADER + " is required: " + UserIds.RULE));
        }
        Parsed<RedemptionRequest> parsed = json.read(body, RedemptionRequest.class, RedemptionRequest::violation);
        if (parsed instanceof Parsed.Invalid<RedemptionRequest> invalid) {
            return answer(badRequest(invalid.detail()));
        }
        return points.redeem(tx, userId, key, ((Parsed.Valid<RedemptionRequest>) parsed).value().points());
    }

    @GET
    @Path("/{userId}")
    public Uni<Response> balance(@PathParam("userId") String userId) {
        if (!UserIds.valid(userId)) {
            return answer(badRequest("the user id must be " + UserIds.RULE));
        }
        return points.balance(userId)
                .map(balance -> Response.ok(new JsonObject().put("userId", userId).put("points", balance).encode())
                        .type(MediaType.APPLICATION_JSON_TYPE).build())
                .onFailure().recoverWithItem(failure -> ProblemAnswers.retryLater(ProblemAnswers.problem(503,
                        "UNAVAILABLE", "the database cannot be reached right now"), Duration.ofSeconds(1)));
    }

    /** Bad input, in the extension's problem+json shape. */
    private static Response badRequest(String detail) {
        return ProblemAnswers.problem(400, "BAD_REQUEST", detail);
    }

    private static Uni<Response> answer(Response response) {
        return Uni.createFrom().item(response);
    }
}
