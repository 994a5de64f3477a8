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

    @Override
    public Response keyInvalid(String header) {
        return Problem.badRequest(header + " must be 1 to 255 printable ASCII characters");
    }

    @Override
    public Response unavailable(Throwable failure) {
        Log.warnf("Dependency unavailable: %s", failure.toString());
        return Problem.retryLater(503, "SERVICE_UNAVAILABLE",
                "a storage dependency is unavailable; nothing was recorded, retry later", Duration.ofSeconds(1));
    }
}
