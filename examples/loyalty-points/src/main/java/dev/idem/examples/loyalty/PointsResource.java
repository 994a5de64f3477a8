package dev.idem.examples.loyalty;

import dev.idem.pipeline.Outcome;
import dev.idem.pipeline.StrictJson;
import dev.idem.pipeline.StrictJson.Parsed;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import java.util.regex.Pattern;
import org.jboss.logging.Logger;

@Path("/points")
@Produces(MediaType.APPLICATION_JSON)
public class PointsResource {

    static final String USER_HEADER = "X-User-Id";
    static final String KEY_HEADER = "Idempotency-Key";
    static final String REPLAYED_HEADER = "Idempotent-Replayed";
    static final String KEY_REUSED = "IDEMPOTENCY_KEY_REUSED";

    private static final Logger LOG = Logger.getLogger(PointsResource.class);
    private static final Pattern KEY = Pattern.compile("[\\x20-\\x7E]{1,255}");

    private final PointsService points;
    private final StrictJson json;

    PointsResource(PointsService points, StrictJson json) {
        this.points = points;
        this.json = json;
    }

    @POST
    @Path("/redemptions")
    public Uni<Response> redeem(@HeaderParam(USER_HEADER) String userId, @HeaderParam(KEY_HEADER) String key,
                                byte[] body) {
        if (!UserIds.valid(userId)) {
            return answer(Problems.badRequest(USER_HEADER + " is required: " + UserIds.RULE));
        }
        if (key == null) {
            return answer(Problems.response(400, "IDEMPOTENCY_KEY_MISSING", "an Idempotency-Key header is required"));
        }
        if (!KEY.matcher(key).matches()) {
            return answer(Problems.badRequest("Idempotency-Key must be 1 to 255 printable ASCII characters"));
        }
        Parsed<RedemptionRequest> parsed = json.read(body, RedemptionRequest.class, RedemptionRequest::violation);
        if (parsed instanceof Parsed.Invalid<RedemptionRequest> invalid) {
            return answer(Problems.badRequest(invalid.detail()));
        }
        RedemptionRequest request = ((Parsed.Valid<RedemptionRequest>) parsed).value();
        return points.redeem(userId, key, request)
                .map(outcome -> outcome.accept(REDEMPTION_ANSWERS))
                .onFailure().recoverWithItem(PointsResource::unavailable);
    }

    @GET
    @Path("/{userId}")
    public Uni<Response> balance(@PathParam("userId") String userId) {
        if (!UserIds.valid(userId)) {
            return answer(Problems.badRequest("the user id must be " + UserIds.RULE));
        }
        return points.balance(userId)
                .map(balance -> Response.ok(new JsonObject().put("userId", userId).put("points", balance).encode())
                        .type(MediaType.APPLICATION_JSON_TYPE).build())
                .onFailure().recoverWithItem(PointsResource::unavailable);
    }

    /** Stripe's behaviour: replay what was stored, refuse a reused key, ask to wait while in flight. */
    private static final Outcome.Cases<Response> REDEMPTION_ANSWERS = new Outcome.Cases<>() {
        public Response processed(Outcome.Processed o) {
            return replay(o.result(), false);
        }

        public Response duplicate(Outcome.Duplicate o) {
            return replay(o.result(), true);
        }

        public Response inFlight(Outcome.InFlight o) {
            return Problems.retryLater(409, "IDEMPOTENCY_KEY_IN_FLIGHT",
                    "a request with this Idempotency-Key is still being processed", o.retryAfter());
        }

        public Response keyReused(Outcome.KeyReused o) {
            return Problems.response(422, KEY_REUSED, "this Idempotency-Key was used with a different request body");
        }

        public Response anomaly(Outcome.Anomaly o) {
            return Problems.response(409, o.kind(), "the redemption could not be made");
        }

        public Response rejected(Outcome.Rejected o) {
            return Problems.response(KEY_REUSED.equals(o.reason()) ? 422 : 409, o.reason(), o.detail());
        }
    };

    private static Response replay(JsonObject stored, boolean replayed) {
        Response.ResponseBuilder answer = Response.status(stored.getInteger("status"))
                .type(MediaType.APPLICATION_JSON_TYPE)
                .entity(stored.getString("body"));
        if (replayed) {
            answer.header(REPLAYED_HEADER, "true");
        }
        return answer.build();
    }

    /** The database failed: nothing took effect, and the same request may be sent again. */
    private static Response unavailable(Throwable failure) {
        LOG.warnf("answered 503: %s", failure.toString());
        return Problems.retryLater(503, "UNAVAILABLE", "the database cannot be reached right now; "
                + "the same request may be sent again", Duration.ofSeconds(1));
    }

    private static Uni<Response> answer(Response response) {
        return Uni.createFrom().item(response);
    }
}
