package dev.idem.ops;

import dev.idem.web.Problem;
import io.quarkus.logging.Log;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.security.identity.CurrentIdentityAssociation;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.core.Cookie;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;
import org.jboss.resteasy.reactive.server.SimpleResourceInfo;

/**
 * Who may call {@code /admin/*}. With an OpenID Connect provider ({@code quarkus.oidc.auth-server-url}):
 * a verified bearer token, or the console's sign-in; {@code idem-viewer} reads, {@code idem-operator}
 * also changes; {@code X-Admin-Token} only when {@code idem.admin.token} is set as a break-glass.
 * Without one: {@code X-Admin-Token} as before. Every change, and every refusal whose caller can be
 * read, is written to the {@link AuditTrail} before the answer leaves. The console's files, which
 * hold no data, need nothing ({@link ConsoleResource}).
 */
public class AdminAccess {

    static final String TOKEN_HEADER = "X-Admin-Token";
    /** The console's double-submit token: a cookie the page's script reads and sends back as a header. */
    static final String CSRF_COOKIE = "idem-csrf";
    static final String CSRF_HEADER = "X-CSRF-Token";

    private static final String OPERATOR = "idem.operator";

    /** What each change is called in the audit trail, by the resource method that makes it. */
    private static final Map<String, String> ACTIONS = Map.of(
            "repair", "reconciliation.repair",
            "redrive", "dedup.redrive",
            "redriveFailed", "dedup.redrive-failed",
            "archive", "archive",
            "redriveDeadLetters", "dead-letters.redrive",
            "importBill", "bill.import");

    private final Optional<String> breakGlass;
    private final boolean provider;
    private final CurrentIdentityAssociation identities;
    private final AuditTrail trail;
    private final Clock clock;

    AdminAccess(OpsConfig config, @ConfigProperty(name = "quarkus.oidc.auth-server-url") Optional<String> provider,
                CurrentIdentityAssociation identities, AuditTrail trail, Clock clock) {
        this.breakGlass = config.admin().token();
        this.provider = provider.isPresent();
        this.identities = identities;
        this.trail = trail;
        this.clock = clock;
    }

    void warnOfBreakGlass(@Observes StartupEvent started) {
        if (provider && breakGlass.isPresent()) {
            Log.warn("idem.admin.token is set beside an identity provider: X-Admin-Token opens the admin API as an "
                    + "operator ('admin-token' in the audit trail). Keep it for when the provider is down, then unset it.");
        }
    }

    @ServerRequestFilter
    public Uni<Response> admit(ContainerRequestContext request, SimpleResourceInfo resource, RoutingContext routing) {
        String path = request.getUriInfo().getPath();
        if (!path.startsWith("/admin/") || ConsoleResource.isConsoleFile(request.getMethod(), path)) {
            return admitted();
        }
        String token = request.getHeaderString(TOKEN_HEADER);
        if (token != null || !provider) {
            if (token != null && breakGlass.map(expected -> same(expected, token)).orElse(false)) {
                routing.put(OPERATOR, Operator.ADMIN_TOKEN);
                return admitted();
            }
            return Uni.createFrom().item(Problem.response(401, "ADMIN_UNAUTHORIZED", provider
                    ? "X-Admin-Token is not accepted here: send Authorization: Bearer <access token>"
                    : "a valid X-Admin-Token is required"));
        }
        return identities.getDeferredIdentity()
                .onItemOrFailure().transformToUni((identity, failure) -> failure != null || identity.isAnonymous()
                        ? unauthorized(request, resource, failure)
                        : authorize(request, resource, routing, identity));
    }

    private Uni<Response> unauthorized(ContainerRequestContext request, SimpleResourceInfo resource, Throwable failure) {
        Response refused = Problem.response(401, "ADMIN_UNAUTHORIZED", failure == null
                ? "sign in through the console, or send Authorization: Bearer <access token>"
                : "the bearer token was refused: it is not a valid, current access token of this service's provider");
        // a refused token's claims are not trusted, but they say who seemed to try
        return Operator.claimedBy(request.getHeaderString(HttpHeaders.AUTHORIZATION))
                .map(claimed -> audit(request, resource, claimed, 401, null).replaceWith(refused))
                .orElseGet(() -> Uni.createFrom().item(refused));
    }

    private Uni<Response> authorize(ContainerRequestContext request, SimpleResourceInfo resource, RoutingContext routing,
                                    SecurityIdentity identity) {
        Operator who = Operator.of(identity);
        boolean change = changes(request);
        String refusal = change && !who.mayChange() ? "changes need the role " + Operator.OPERATOR
                : !who.mayRead() ? "the admin API needs the role " + Operator.VIEWER + " or " + Operator.OPERATOR
                : change && bySession(request) && !csrfMatches(request) ? "a change from the console must carry its " + CSRF_HEADER
                : null;
        if (refusal != null) {
            return audit(request, resource, who, 403, null).replaceWith(Problem.response(403, "ADMIN_FORBIDDEN", refusal));
        }
        routing.put(OPERATOR, who);
        return admitted();
    }

    /** Once a change is answered, and before the answer leaves: what it did, in the audit trail. */
    @ServerResponseFilter
    public Uni<Void> recordChange(ContainerRequestContext request, ContainerResponseContext response,
                                  SimpleResourceInfo resource, RoutingContext routing) {
        if (!(routing.get(OPERATOR) instanceof Operator who) || !changes(request)) {
            return Uni.createFrom().voidItem();
        }
        return audit(request, resource, who, response.getStatus(), AuditResults.counts(response.getEntity()))
                // the change is made: its answer goes out even if the trail could not take it, with an alert
                .onFailure().invoke(failure -> Log.errorf("ALERT audit entry not written: %s by %s answered %d: %s",
                        action(request, resource), who.subject(), response.getStatus(), failure.toString()))
                .onFailure().recoverWithNull();
    }

    /** Who this admitted request came from. */
    static Operator operator(RoutingContext routing) {
        return routing.get(OPERATOR);
    }

    private Uni<Void> audit(ContainerRequestContext request, SimpleResourceInfo resource, Operator who, int status,
                            JsonObject result) {
        MultivaluedMap<String, String> path = request.getUriInfo().getPathParameters();
        String target = path.isEmpty() ? null : String.join("/", path.values().stream().map(v -> v.get(0)).toList());
        JsonObject parameters = new JsonObject();
        request.getUriInfo().getQueryParameters().forEach((name, values) -> parameters.put(name, values.get(0)));
        return trail.record(new AuditTrail.Entry(clock.instant(), who, action(request, resource), target, parameters,
                result, status));
    }

    private static String action(ContainerRequestContext request, SimpleResourceInfo resource) {
        if (!changes(request)) {
            return "read";
        }
        String method = resource == null ? null : resource.getMethodName();
        return method == null ? request.getMethod() + " " + request.getUriInfo().getPath() : ACTIONS.getOrDefault(method, method);
    }

    private static boolean changes(ContainerRequestContext request) {
        return !"GET".equals(request.getMethod()) && !"HEAD".equals(request.getMethod());
    }

    /** Signed in through the console: its session cookie, not a bearer token. */
    private static boolean bySession(ContainerRequestContext request) {
        return request.getHeaderString(HttpHeaders.AUTHORIZATION) == null;
    }

    private static boolean csrfMatches(ContainerRequestContext request) {
        Cookie cookie = request.getCookies().get(CSRF_COOKIE);
        String header = request.getHeaderString(CSRF_HEADER);
        return cookie != null && header != null && !header.isEmpty() && same(cookie.getValue(), header);
    }

    private static boolean same(String expected, String given) {
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8));
    }

    private static Uni<Response> admitted() {
        return Uni.createFrom().nullItem();
    }
}
