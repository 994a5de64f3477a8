package dev.idem.coupons;

import dev.idem.web.Problem;
import dev.idem.web.UserIdFilter;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonArray;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

@Path("/api/users/{userId}/coupons")
@Produces(MediaType.APPLICATION_JSON)
public class CouponResource {

    private final CouponService coupons;

    CouponResource(CouponService coupons) {
        this.coupons = coupons;
    }

    /** A user sees only their own coupons; anyone else's list answers 404, like a missing user. */
    @GET
    public Uni<Response> list(@HeaderParam(UserIdFilter.HEADER) String caller, @PathParam("userId") String userId) {
        if (!userId.equals(caller)) {
            return Uni.createFrom().item(Problem.response(404, "USER_NOT_FOUND", "no such user"));
        }
        return coupons.ofUser(userId).map(list -> {
            JsonArray body = new JsonArray();
            list.forEach(coupon -> body.add(coupon.toJson()));
            return Response.ok(body.encode(), MediaType.APPLICATION_JSON_TYPE).build();
        });
    }
}
