package dev.idem.web;

import dev.idem.support.UserIds;
import io.quarkus.security.identity.CurrentIdentityAssociation;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.jwt.JsonWebToken;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Who calls the user's own endpoints. By default ({@code idem.identity=header}) the
 * {@code X-User-Id} that the gateway which authenticated the user set; with {@code idem.identity=jwt}
 * the {@code sub} of the verified bearer token, written over any {@code X-User-Id} sent, so that the
 * resources read the caller in one place either way. The payment callback carries a signature
 * instead, and admin endpoints their own credentials. No caller is 401; an id of another shape than
 * {@link UserIds} allows is 400 and reaches no resource.
 */
public class UserIdFilter {

    public static final String HEADER = "X-User-Id";

    private final boolean byToken;
    private final CurrentIdentityAssociation identities;

    UserIdFilter(ApiConfig config, CurrentIdentityAssociation identities) {
        this.byToken = config.identity() == ApiConfig.Identity.JWT;
        this.identities = identities;
    }

    @ServerRequestFilter
    public Uni<Response> requireUser(ContainerRequestContext request) {
        String path = request.getUriInfo().getPath();
        if (!path.startsWith("/api/") || path.startsWith("/api/payments/")) {
            return Uni.createFrom().nullItem();
        }
        if (!byToken) {
            return Uni.createFrom().item(check(request.getHeaderString(HEADER), "the X-User-Id header is missing"));
        }
        request.getHeaders().remove(HEADER);
        return identities.getDeferredIdentity().onItemOrFailure().transform((identity, failure) -> {
            String subject = failure == null && !identity.isAnonymous() && identity.getPrincipal() instanceof JsonWebToken token
                    ? token.getSubject() : null;
            Response refused = check(subject, "a valid bearer access token of this service's identity provider is required");
            if (refused == null) {
                request.getHeaders().putSingle(HEADER, subject);
            }
            return refused;
        });
    }

    private static Response check(String user, String missing) {
        if (user == null || user.isBlank()) {
            return Problem.response(401, "USER_MISSING", missing);
        }
        if (!UserIds.valid(user)) {
            return Problem.response(400, "USER_INVALID", "the user id must be " + UserIds.RULE);
        }
        return null;
    }
}
