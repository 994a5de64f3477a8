package dev.idem.orders;

import dev.idem.pipeline.StrictJson;
import dev.idem.pipeline.StrictJson.Parsed;
import dev.idem.pipeline.rest.Idempotent;
import dev.idem.pipeline.rest.KnownAnswer;
import dev.idem.tokens.TokenResource;
import dev.idem.web.Json;
import dev.idem.support.Ids;
import dev.idem.web.Problem;
import dev.idem.web.UserIdFilter;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

@Path("/api/orders")
@Produces(MediaType.APPLICATION_JSON)
public class OrderResource {

    static final String KEY_HEADER = "Idempotency-Key";
    static final String TOKEN_HEADER = "Idempotency-Token";
    /** Order ids are UUIDs; 128 is the bound every channel applies to them. */
    private static final int MAX_ORDER_ID = 128;

    private final OrderService orders;
    private final StrictJson json;

    OrderResource(OrderService orders, StrictJson json) {
        this.orders = orders;
        this.json = json;
    }

    /**
     * A submit behind an Idempotency-Key runs in the pipeline (the extension answers replays, reused
     * and in-flight keys); one behind a one-time token runs without it, with no connection.
     */
    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Idempotent(scope = OrderService.SUBMIT_SCOPE, keyRequired = false)
    public Uni<Response> submit(@HeaderParam(UserIdFilter.HEADER) String userId,
                                @HeaderParam(KEY_HEADER) String key,
                                @HeaderParam(TOKEN_HEADER) String token,
                                byte[] body, SqlConnection tx) {
        if (key != null && token != null) {
            return answer(Problem.response(400, "IDEMPOTENCY_KEY_AMBIGUOUS",
                    "send either Idempotency-Key or Idempotency-Token, not both"));
        }
        if (key == null && token == null) {
            return answer(Problem.response(400, "IDEMPOTENCY_KEY_MISSING",
                    "an Idempotency-Key or Idempotency-Token header is required"));
        }
        Parsed<OrderRequest> parsed = json.read(body, OrderRequest.class, OrderRequest::violation);
        if (parsed instanceof Parsed.Invalid<OrderRequest> invalid) {
            return answer(Problem.badRequest(invalid.detail()));
        }
        OrderRequest request = ((Parsed.Valid<OrderRequest>) parsed).value();
        if (key != null) {
            // the answer is known before the insert answers: the key's record goes right behind it
            OrderService.NewOrder made = orders.create(userId, request);
            return KnownAnswer.after(tx, created(made.order().toJson()), made.insert());
        }
        return orders.submitWithToken(userId, token, request).map(OrderResource::tokenAnswer);
    }

    /** The same answer as a key's first execution; a token that cannot be used is 409, or 503 without Redis. */
    private static Response tokenAnswer(OrderService.TokenSubmit submit) {
        if (submit instanceof OrderService.TokenSubmit.Created created) {
            return created(created.order().toJson());
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

    private static Response created(JsonObject order) {
        return Json.status(201, order).build();
    }

    private static Uni<Response> answer(Response response) {
        return Uni.createFrom().item(response);
    }
}
