package dev.idem.ops;

import dev.idem.ops.DeadLetters.Redrive;
import dev.idem.ops.DeadLetters.Source;
import dev.idem.pipeline.DedupAdmin;
import dev.idem.support.Ids;
import dev.idem.web.Json;
import dev.idem.web.Problem;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.function.Function;
import org.apache.kafka.common.KafkaException;

/** Operators' endpoints; {@link AdminAccess} decides who gets in. */
@Path("/admin")
@Produces(MediaType.APPLICATION_JSON)
public class AdminResource {

    private static final AttributeKey<String> URL_PATH = AttributeKey.stringKey("url.path");
    private static final Duration RETRY_AFTER_KAFKA = Duration.ofSeconds(5);

    private final Reconciliation reconciliation;
    private final Archiver archiver;
    private final DedupAdmin dedup;
    private final DeadLetters deadLetters;
    private final ConsoleHistory history;
    private final Optional<String> traceUrl;
    private final AuditTrail audit;

    AdminResource(Reconciliation reconciliation, Archiver archiver, DedupAdmin dedup, DeadLetters deadLetters,
                  ConsoleHistory history, OpsConfig config, AuditTrail audit) {
        this.audit = audit;
        this.traceUrl = config.tracing().traceUrlOrZipkin();
        this.reconciliation = reconciliation;
        this.archiver = archiver;
        this.dedup = dedup;
        this.deadLetters = deadLetters;
        this.history = history;
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

    /** A FAILED two-phase record run again now, with all its attempts (its cause fixed). */
    @POST
    @Path("/dedup/{scope}/{key}/redrive")
    public Uni<Response> redriveFailed(@PathParam("scope") String scope, @PathParam("key") String key) {
        keyOutOfTrace("/admin/dedup/" + scope + "/{key}/redrive");
        if (!storable(scope, key)) {
            return Uni.createFrom().item(Problem.response(404, "FAILED_RECORD_NOT_FOUND",
                    "this key has no FAILED two-phase record"));
        }
        return dedup.redriveFailed(scope, key).map(done -> done
                .map(resumption -> Json.ok(new JsonObject().put("scope", scope).put("key", key).put("result", resumption)))
                .orElseGet(() -> Problem.response(404, "FAILED_RECORD_NOT_FOUND",
                        "this key has no FAILED two-phase record")));
    }

    /** Who is calling, and what they may do: the console shows it. */
    @GET
    @Path("/me")
    public Response me(@Context RoutingContext routing) {
        return Json.ok(AdminAccess.operator(routing).toJson());
    }

    /** {@code limit} (default 100, at most 1000) entries of the audit trail from {@code since} (ISO-8601) on, newest first. */
    @GET
    @Path("/audit")
    public Uni<Response> audit(@QueryParam("limit") String limit, @QueryParam("since") String since) {
        int count = 0;
        Instant from = null;
        try {
            count = limit == null ? 100 : Integer.parseInt(limit);
            from = since == null ? Instant.EPOCH : Instant.parse(since);
        } catch (NumberFormatException | DateTimeParseException unreadable) {
            // answered as out of range below
        }
        if (from == null || count < 1 || count > 1000) {
            return Uni.createFrom().item(Problem.badRequest("limit must be an integer from 1 to 1000, since an ISO-8601 instant"));
        }
        return audit.newest(from, count).map(entries -> Response.ok(entries.encode(), MediaType.APPLICATION_JSON).build());
    }

    /** This instance's counters over the last hour, sampled for the console's charts. */
    @GET
    @Path("/history")
    public Uni<Response> history() {
        return history.history().map(Json::ok);
    }

    @POST
    @Path("/archive")
    public Uni<Response> archive() {
        return dedup.archiveNow().chain(records -> archiver.archiveNow().chain(events -> archiver.archiveAudit()
                .map(entries -> Json.ok(new JsonObject()
                        .put("dedupRecords", records)
                        .put("outboxEvents", events)
                        .put("auditEntries", entries)))));
    }

    @GET
    @Path("/dedup/{scope}/{key}")
    public Uni<Response> dedupTrail(@PathParam("scope") String scope, @PathParam("key") String key) {
        keyOutOfTrace("/admin/dedup/" + scope + "/{key}");
        if (!storable(scope, key)) {
            return Uni.createFrom().item(Problem.response(404, "DEDUP_KEY_NOT_FOUND", "no layer knows this key"));
        }
        return dedup.trail(scope, key).map(found -> found
                .map(this::withTraceUrl)
                .map(Json::ok)
                .orElseGet(() -> Problem.response(404, "DEDUP_KEY_NOT_FOUND", "no layer knows this key")));
    }

    /** A key may carry a user's data, so the request's span keeps the path without it, as idem's own spans do. */
    private static void keyOutOfTrace(String path) {
        Span.current().setAttribute(URL_PATH, path);
    }

    /** The page of the trace that applied the key, when a trace UI is known. */
    private JsonObject withTraceUrl(JsonObject trail) {
        JsonObject record = trail.getJsonObject("record");
        String traceId = record == null ? null : record.getString("traceId");
        return traceId == null || traceUrl.isEmpty() ? trail
                : trail.put("traceUrl", traceUrl.get().replace("{traceId}", traceId));
    }

    /** {@code limit} (default 100, at most 1000): the newest that many, newest first. */
    @GET
    @Path("/dead-letters/{channel}")
    public Uni<Response> deadLetters(@PathParam("channel") String channel, @QueryParam("limit") String limit) {
        return withSource(channel, source -> deadLetters.limit(limit)
                .map(count -> deadLetters.list(source, count).map(Json::ok))
                .orElseGet(() -> Uni.createFrom().item(Problem.badRequest(
                        "limit must be an integer from 1 to " + deadLetters.maxLimit()))));
    }

    /**
     * Every dead letter not re-driven before, or the one named by {@code offset=<partition>:<offset>}
     * (or {@code partition=<partition>&offset=<offset>}): an offset alone names no record, since the
     * dead-letter topic has several partitions.
     */
    @POST
    @Path("/dead-letters/{channel}/redrive")
    public Uni<Response> redriveDeadLetters(@PathParam("channel") String channel,
                                            @QueryParam("partition") String partition,
                                            @QueryParam("offset") String offset) {
        return withSource(channel, source -> DeadLetters.selection(partition, offset)
                .map(selection -> deadLetters.redrive(source, selection).map(redrive -> answer(source, redrive)))
                .orElseGet(() -> Uni.createFrom().item(Problem.badRequest(
                        "name one dead letter as offset=<partition>:<offset> or partition=<partition>&offset=<offset>,"
                                + " or none for all: an offset alone is ambiguous, the topic has several partitions"))));
    }

    /** A scope and key that a record could have: no layer can know any other, and Postgres refuses a NUL. */
    private static boolean storable(String scope, String key) {
        return Ids.valid(scope, 255) && Ids.valid(key, 1024);
    }

    private static Response answer(Source source, Redrive redrive) {
        if (redrive instanceof Redrive.NotFound missing) {
            return Problem.response(404, "DEAD_LETTER_NOT_FOUND",
                    source.deadLetterTopic() + " holds no record at " + missing.position());
        }
        return Json.ok(DeadLetters.toJson(source, ((Redrive.Done) redrive).tally()));
    }

    private Uni<Response> withSource(String channel, Function<Source, Uni<Response>> work) {
        Optional<Source> source = deadLetters.source(channel);
        if (source.isEmpty()) {
            return Uni.createFrom().item(Problem.response(404, "CHANNEL_NOT_FOUND",
                    "no channel of that name keeps dead letters"));
        }
        return work.apply(source.get()).onFailure(KafkaException.class).recoverWithItem(failure -> {
            Log.warnf("%s: dead letters unavailable: %s", channel, failure.toString());
            return Problem.retryLater(503, "KAFKA_UNAVAILABLE",
                    "Kafka could not be reached; what was re-driven before stays recorded, retry later",
                    RETRY_AFTER_KAFKA);
        });
    }
}
