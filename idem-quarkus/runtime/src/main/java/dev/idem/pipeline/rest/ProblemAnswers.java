package dev.idem.pipeline.rest;

import dev.idem.pipeline.Outcome;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.quarkus.arc.DefaultBean;
import io.vertx.core.json.JsonObject;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import org.jboss.logging.Logger;

/**
 * What {@link Idempotent} endpoints answer when the answer is not the method's own: RFC 9457
 * {@code application/problem+json} with a {@code code} member. The one place to change them: a
 * bean extending this class, overriding what it wants, replaces it
 * ({@code @ApplicationScoped class MyAnswers extends ProblemAnswers { ... }}).
 */
@ApplicationScoped
@DefaultBean
public class ProblemAnswers {

    public static final String MEDIA_TYPE = "application/problem+json";

    private static final Logger LOG = Logger.getLogger(ProblemAnswers.class);

    /** The request has no key, and the endpoint requires one: 400 {@code IDEMPOTENCY_KEY_MISSING}. */
    public Response keyMissing(String header) {
        return problem(400, "IDEMPOTENCY_KEY_MISSING", "an " + header + " header is required");
    }

    /** The key is not 1 to 255 printable ASCII characters: 400 {@code IDEMPOTENCY_KEY_INVALID}. */
    public Response keyInvalid(String header) {
        return problem(400, "IDEMPOTENCY_KEY_INVALID", header + " must be 1 to 255 printable ASCII characters");
    }

    /**
     * {@code idem.pipeline.http.caller-header} names a header the request lacks, so its key cannot
     * be told from another caller's: 401 {@code CALLER_MISSING}.
     */
    public Response callerMissing(String header) {
        return problem(401, "CALLER_MISSING", "the " + header + " header is required");
    }

    /**
     * The body could not be read into the method's parameter (not well-formed JSON, a member of the
     * wrong type, or one the type does not declare where Jackson is told to refuse those): 400
     * {@code BAD_REQUEST}, {@code detail} naming the member. Nothing is stored.
     */
    public Response bodyUnreadable(String detail) {
        return problem(400, "BAD_REQUEST", detail);
    }

    /** A request with the same key is still being processed: 409 with {@code Retry-After}. */
    public Response inFlight(Duration retryAfter) {
        return retryLater(problem(409, "IDEMPOTENCY_KEY_IN_FLIGHT",
                "a request with this key is still being processed; send it again later"), retryAfter);
    }

    /** The key was used before with another request (method, path or body): 422. */
    public Response keyReused() {
        return problem(422, "IDEMPOTENCY_KEY_REUSED", "this key was used before with a different request");
    }

    /**
     * Nothing was recorded and sending the same request again will not change that: the database
     * refused the request's data (400 {@code INVALID_DATA}), or the change was made before under
     * another key (409 {@code UNIQUE_VIOLATION}).
     */
    public Response rejected(Outcome.Rejected rejected) {
        int status = Outcome.Rejected.INVALID_DATA.equals(rejected.reason()) ? 400 : 409;
        return problem(status, rejected.reason(), rejected.detail());
    }

    /** The work reported an anomaly (a state it cannot apply the request to): 409 with its kind. */
    public Response anomaly(Outcome.Anomaly anomaly) {
        return problem(409, anomaly.kind(), "the request could not be applied");
    }

    /** The database could not be reached: 503, and nothing took effect, so the same request may come again. */
    public Response unavailable(Throwable failure) {
        // the pipeline says at WARN, once a minute, that the database is failing; here each answer is detail
        LOG.debugf("answered 503: %s", failure.toString());
        return retryLater(problem(503, "UNAVAILABLE",
                "the database cannot be reached right now; the same request may be sent again"), Duration.ofSeconds(1));
    }

    /**
     * A problem+json answer with {@code status}, {@code code} and {@code detail}: also what an
     * {@code @Idempotent} method refuses with, e.g.
     * {@code throw new WebApplicationException(ProblemAnswers.problem(409, "BALANCE_SHORT", "..."))}.
     */
    public static Response problem(int status, String code, String detail) {
        // Netty's phrases: Jakarta REST's list has no 422, and about:blank's title is the status's phrase
        JsonObject problem = new JsonObject()
                .put("type", "about:blank")
                .put("title", HttpResponseStatus.valueOf(status).reasonPhrase())
                .put("status", status)
                .put("detail", detail)
                .put("code", code);
        return Response.status(status).type(MEDIA_TYPE).entity(problem.encode()).build();
    }

    /** {@code answer} with {@code Retry-After} in whole seconds, at least one. */
    public static Response retryLater(Response answer, Duration after) {
        return Response.fromResponse(answer).header("Retry-After", Math.max(1, (after.toMillis() + 999) / 1000)).build();
    }
}
