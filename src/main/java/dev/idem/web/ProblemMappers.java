package dev.idem.web;

import io.quarkus.logging.Log;
import io.vertx.core.VertxException;
import io.vertx.pgclient.PgException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * Whatever escapes a resource leaves as problem+json: no stack trace, no framework page. Outcomes
 * never come here; only broken dependencies and requests the framework itself refused do.
 * What fails outside the REST layer (a body past its limit while it is read, say) is answered by
 * {@link RequestLimits} in the same shape.
 */
public class ProblemMappers {

    private static final Duration RETRY_AFTER_OUTAGE = Duration.ofSeconds(1);

    @ServerExceptionMapper
    public Response framework(WebApplicationException e) {
        int status = e.getResponse().getStatus();
        String detail = status >= 500 ? "the request could not be served" : e.getMessage();
        return Problem.response(status, Problem.codeOf(status), detail);
    }

    /**
     * Postgres or Redis down, refusing, too slow, or cutting a connection (a restart resets the
     * pool's sockets): the client should retry shortly.
     */
    @ServerExceptionMapper({PgException.class, IOException.class, VertxException.class, TimeoutException.class})
    public Response unavailable(Exception e) {
        Log.warnf("Dependency unavailable: %s", e.toString());
        return Problem.retryLater(503, "SERVICE_UNAVAILABLE",
                IdemAnswers.UNAVAILABLE, RETRY_AFTER_OUTAGE);
    }

    @ServerExceptionMapper
    public Response unexpected(Throwable e) {
        Log.error("Unexpected failure while serving a request", e);
        return Problem.response(500, "INTERNAL_ERROR", "the request could not be served");
    }
}
