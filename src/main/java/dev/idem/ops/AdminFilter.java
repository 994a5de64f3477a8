package dev.idem.ops;

import dev.idem.web.Problem;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * {@code /admin/*} needs {@code X-Admin-Token} equal to the configured token, compared in constant
 * time; only the console's own files ({@link ConsoleResource}), which hold no data, are served without.
 */
public class AdminFilter {

    static final String HEADER = "X-Admin-Token";

    private final OpsConfig.Admin config;

    AdminFilter(OpsConfig config) {
        this.config = config.admin();
    }

    @ServerRequestFilter
    public Optional<Response> requireAdmin(ContainerRequestContext request) {
        String path = request.getUriInfo().getPath();
        if (!path.startsWith("/admin/") || ConsoleResource.isConsoleFile(request.getMethod(), path)) {
            return Optional.empty();
        }
        String given = request.getHeaderString(HEADER);
        boolean allowed = given != null && config.token()
                .map(token -> MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8)))
                .orElse(false);
        return allowed ? Optional.empty()
                : Optional.of(Problem.response(401, "ADMIN_UNAUTHORIZED", "a valid X-Admin-Token is required"));
    }
}
