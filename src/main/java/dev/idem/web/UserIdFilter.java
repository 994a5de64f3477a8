package dev.idem.web;

import dev.idem.support.UserIds;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Response;
import java.util.Optional;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * The user's own endpoints trust {@code X-User-Id}, set by the gateway that authenticated the user.
 * The payment callback carries a signature instead, and admin endpoints an admin token. A missing
 * id is 401; one of another shape than {@link UserIds} allows is 400 and reaches no resource.
 */
public class UserIdFilter {

    public static final String HEADER = "X-User-Id";

    @ServerRequestFilter
    public Optional<Response> requireUser(ContainerRequestContext request) {
        String path = request.getUriInfo().getPath();
        if (!path.startsWith("/api/") || path.startsWith("/api/payments/")) {
            return Optional.empty();
        }
        String user = request.getHeaderString(HEADER);
        if (user == null || user.isBlank()) {
            return Optional.of(Problem.response(401, "USER_MISSING", "the X-User-Id header is missing"));
        }
        if (!UserIds.valid(user)) {
            return Optional.of(Problem.response(400, "USER_INVALID", "X-User-Id must be " + UserIds.RULE));
        }
        return Optional.empty();
    }
}
