package dev.idem.bench;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * The benchmark's yardstick, in the benchmark's build only ({@code ./mvnw -Pbench}): an endpoint
 * that does nothing but one Redis GET, so the duplicate path (one Redis round trip) can be compared
 * with the least an endpoint here can cost. It reaches Redis through the Quarkus Redis client as
 * configured ({@code quarkus.redis.*}), as any application on this stack would.
 */
@Path("/bench/redis-get")
public class BareRedisResource {

    private final Redis redis;

    BareRedisResource(Redis redis) {
        this.redis = redis;
    }

    @GET
    @Operation(hidden = true)
    public Uni<Response> get() {
        return redis.send(Request.cmd(Command.GET).arg("idem:bench:bare"))
                .map(value -> Response.ok("{\"code\":\"SUCCESS\"}", MediaType.APPLICATION_JSON_TYPE).build());
    }
}
