package dev.idem.web;

import dev.idem.pipeline.rest.ProblemAnswers;
import io.quarkus.logging.Log;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Response;
import java.time.Duration;

/**
 * The extension's answers for {@code @Idempotent} endpoints, in idem's words where the API has
 * them already: a malformed key is a {@code BAD_REQUEST} like any malformed input, an unreachable
 * database is {@code SERVICE_UNAVAILABLE} as on every other path.
 */
@ApplicationScoped
public class IdemAnswers extends ProblemAnswers {

    /**
     * A failure at commit (a failover) may come after the change was made: the answer does not
     * say it was not, and the retry tells.
     */
    static final String UNAVAILABLE = "a storage dependency is unavailable; retry later "
            + "(a change made before the failure is answered as done)";

    @Override
    public Response keyInvalid(String header) {
        return Problem.badRequest(header + " must be 1 to 255 printable ASCII characters");
    }

    @Override
    public Response unavailable(Throwable failure) {
        Log.warnf("Dependency unavailable: %s", failure.toString());
        return Problem.retryLater(503, "SERVICE_UNAVAILABLE",
                UNAVAILABLE, Duration.ofSeconds(1));
    }
}
