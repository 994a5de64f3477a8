package dev.idem.pipeline.rest;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import dev.idem.pipeline.StrictJson;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * A body Quarkus REST could not bind for an {@link Idempotent} method is answered like every other
 * refusal of the extension: RFC 9457 problem+json, 400 {@code BAD_REQUEST}, naming the member at
 * fault ({@link ProblemAnswers#bodyUnreadable}). Quarkus' Jackson reader throws the binding's own
 * exception, or a 400 {@link WebApplicationException} around JSON it could not parse; both come
 * here. Other endpoints' failures are answered as Quarkus would answer them, and a service's own
 * mappers for these types win (they take precedence over this one's priority).
 */
public class UnreadableBodies {

    /** The request property that marks a request for an {@code @Idempotent} method (its scope). */
    static final String ENDPOINT = "dev.idem.pipeline.rest.Idempotent";

    /** Before Quarkus' own mapper of binding failures, after the service's. */
    private static final int PRIORITY = Priorities.USER + 50;

    private final ProblemAnswers answers;

    UnreadableBodies(ProblemAnswers answers) {
        this.answers = answers;
    }

    @ServerExceptionMapper(priority = PRIORITY)
    public Response unbound(MismatchedInputException failure, ContainerRequestContext request) {
        return request.getProperty(ENDPOINT) != null
                ? answers.bodyUnreadable(StrictJson.describe(failure))
                : Response.status(Response.Status.BAD_REQUEST).build();
    }

    @ServerExceptionMapper(priority = PRIORITY)
    public Response unparsed(WebApplicationException failure, ContainerRequestContext request) {
        return request.getProperty(ENDPOINT) != null && failure.getCause() instanceof JacksonException unreadable
                ? answers.bodyUnreadable(StrictJson.describe(unreadable))
                : failure.getResponse();
    }
}
