package dev.idem.orders;

import dev.idem.pipeline.Outcome;
import dev.idem.tokens.TokenResource;
import dev.idem.web.Json;
import dev.idem.pipeline.StrictJson;
import dev.idem.pipeline.StrictJson.Parsed;
import dev.idem.support.Ids;
import dev.idem.web.Problem;
import dev.idem.web.UserIdFilter;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.regex.Pattern;

@Path("/api/orders")
@Produces(MediaType.APPLICATION_JSON)
public class OrderResource {

    static final String KEY_HEADER = "Idempotency-Key";
    static final String TOKEN_HEADER = "Idempotency-Token";
    private static final Pattern KEY = Pattern.compile("[\\x20-\\x7E]{1,255}");
    /** Order ids are UUIDs; 128 is the bound every channel applies to them. */
    private static final int MAX_ORDER_ID = 128;

    private final OrderService orders;
    private final StrictJson json;

    OrderResource(OrderService orders, StrictJson json) {
        this.orders = orders;
        this.json = json;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> submit(@HeaderParam(UserIdFilter.HEADER) String userId,
                                @HeaderParam(KEY_HEADER) String key,
                                @HeaderParam(TOKEN_HEADER) String token,
                                byte[] body) {
        if (key != null && token != null) {
            return answer(Problem.response(400, "IDEMPOTENCY_KEY_AMBIGUOUS",
                    "send either Idempotency-Key or Idempotency-Token, not both"));
        }
        if (key == null && token == null) {
            return answer(Problem.response(400, "IDEMPOTENCY_KEY_MISSING",
                    "an Idempotency-Key or Idempotency-Token header is required"));
        }
        if (key != null && !KEY.matcher(key).matches()) {
            return answer(Problem.badRequest("Idempotency-Key must be 1 to 255 printable ASCII characters"));
        }
        Parsed<OrderRequest> parsed = json.read(body, OrderRequest.class, OrderRequest::violation);
        if (parsed instanceof Parsed.Invalid<OrderRequest> invalid) {
            return answer(Problem.badRequest(invalid.detail()));
        }
        OrderRequest request = ((Parsed.Valid<OrderRequest>) parsed).value();
        if (key != null) {
            return orders.submit(userId, key, request).map(outcome -> outcome.accept(SUBMIT_ANSWERS));
        }
        return orders.submitWithToken(userId, token, request).map(OrderResource::tokenAnswer);
    }

    /** The same answer as a key's first execution; a token that cannot be used is 409, or 503 without Redis. */
    private static Response tokenAnswer(OrderService.TokenSubmit submit) {
        if (submit instanceof OrderService.TokenSubmit.Created created) {
            return replay(created.answer(), false);
        }
        if (submit instanceof OrderService.TokenSubmit.StoreUnavailable) {
            return TokenResource.unavailable();
        }
        return Problem.response(409, "TOKEN_INVALID", "the token is unknown, expired, used or not yours");
    }

    @GET
    @Path("/{orderId}")
    public Uni<Response> get(@HeaderParam(UserIdFilter.HEADER) String userId, @PathParam("orderId") String orderId) {
        if (!Ids.valid(orderId, MAX_ORDER_ID)) {
            // no order can have such an id
            return Uni.createFrom().item(Problem.response(404, "ORDER_NOT_FOUND", "no such order"));
        }
        return orders.findOwned(userId, orderId).map(found -> found
                .map(order -> Json.ok(order.toJson()))
                .orElseGet(() -> Problem.response(404, "ORDER_NOT_FOUND", "no such order")));
    }

    /** Stripe's behaviour: replay what was stored, refuse a reused key, ask to wait while in flight. */
    private static final Outcome.Cases<Response> SUBMIT_ANSWERS = new Outcome.Cases<>() {
        public Response processed(Outcome.Processed o) {
            return replay(o.result(), false);
        }

        public Response duplicate(Outcome.Duplicate o) {
            return replay(o.result(), true);
        }

        public Response inFlight(Outcome.InFlight o) {
            return Problem.retryLater(409, "IDEMPOTENCY_KEY_IN_FLIGHT",
                    "a request with this Idempotency-Key is still being processed", o.retryAfter());
        }

        public Response keyReused(Outcome.KeyReused o) {
            return Problem.response(422, "IDEMPOTENCY_KEY_REUSED",
                    "this Idempotency-Key was used with a different request body");
        }

        public Response anomaly(Outcome.Anomaly o) {
            return Problem.response(409, o.kind(), "the order could not be created");
        }

        public Response rejected(Outcome.Rejected o) {
            return Outcome.Rejected.INVALID_DATA.equals(o.reason()) ? Problem.badRequest(o.detail())
                    : Problem.response(409, o.reason(), o.detail());
        }
    };

    private static Response replay(JsonObject stored, boolean replayed) {
        Response.ResponseBuilder answer = Json.status(stored.getInteger("status"), stored.getJsonObject("body"));
        if (replayed) {
            answer.header("Idempotent-Replayed", "true");
        }
        return answer.build();
    }

    private static Uni<Response> answer(Response response) {
        return Uni.createFrom().item(response);
    }
}
