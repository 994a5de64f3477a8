package dev.idem.web;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Response;
import java.util.Optional;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * The user's own endpoints trust {@code X-User-Id}, set by the gateway that authenticated the user.
 * The payment callback carries a signature instead, and admin endpoints an admin token.
 */
public class UserIdFilter {

    public static final String HEADER = "X-User-Id";

    @ServerRequestFilter
    public Optional<Response> requireUser(ContainerRequestContext request) {
        String path = request.getUriInfo().getPath();
        boolean userEndpoint = path.startsWith("/api/") && !path.startsWith("/api/payments/");
        String user = request.getHeaderString(HEADER);
        if (userEndpoint && (user == null || user.isBlank())) {
            return Optional.of(Problem.response(401, "USER_MISSING", "the X-User-Id header is missing"));
        }
        return Optional.empty();
    }
}
