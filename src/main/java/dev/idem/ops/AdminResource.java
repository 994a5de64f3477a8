package dev.idem.ops;

import dev.idem.pipeline.DedupAdmin;
import dev.idem.web.Json;
import dev.idem.web.Problem;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/** Operators' endpoints; {@link AdminFilter} lets only holders of the admin token in. */
@Path("/admin")
@Produces(MediaType.APPLICATION_JSON)
public class AdminResource {

    private final Reconciliation reconciliation;
    private final Archiver archiver;
    private final DedupAdmin dedup;

    AdminResource(Reconciliation reconciliation, Archiver archiver, DedupAdmin dedup) {
        this.reconciliation = reconciliation;
        this.archiver = archiver;
        this.dedup = dedup;
    }

    /** {@code since} (ISO-8601 instant, optional) limits the report to what was written from then on. */
    @GET
    @Path("/reconciliation")
    public Uni<Response> reconciliation(@QueryParam("since") String since) {
        Instant from;
        try {
            from = since == null ? Instant.EPOCH : Instant.parse(since);
        } catch (DateTimeParseException e) {
            return Uni.createFrom().item(Problem.badRequest("since must be an ISO-8601 instant"));
        }
        return reconciliation.report(from).map(Json::ok);
    }

    @POST
    @Path("/reconciliation/repair")
    public Uni<Response> repair() {
        return reconciliation.repair().map(Json::ok);
    }

    @POST
    @Path("/dedup/redrive")
    public Uni<Response> redrive() {
        return dedup.redriveHanging().map(report -> Json.ok(report.toJson()));
    }

    @POST
    @Path("/archive")
    public Uni<Response> archive() {
        return dedup.archiveNow().chain(records -> archiver.archiveNow().map(events -> Json.ok(new JsonObject()
                .put("dedupRecords", records)
                .put("outboxEvents", events))));
    }

    @GET
    @Path("/dedup/{scope}/{key}")
    public Uni<Response> dedupTrail(@PathParam("scope") String scope, @PathParam("key") String key) {
        return dedup.trail(scope, key).map(found -> found
                .map(Json::ok)
                .orElseGet(() -> Problem.response(404, "DEDUP_KEY_NOT_FOUND", "no layer knows this key")));
    }
}
