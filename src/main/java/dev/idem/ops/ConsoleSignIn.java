package dev.idem.ops;

import io.quarkus.oidc.OidcRequestContext;
import io.quarkus.oidc.OidcTenantConfig;
import io.quarkus.oidc.TenantConfigResolver;
import io.quarkus.oidc.runtime.OidcTenantConfig.ApplicationType;
import io.quarkus.oidc.runtime.OidcTenantConfig.Authentication.CookieSameSite;
import io.quarkus.oidc.runtime.OidcTenantConfig.Roles.Source;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.vertx.http.runtime.security.HttpSecurityPolicy;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.RequestOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The console's sign-in at the service's identity provider: a tenant of its own (the provider's
 * public client {@code idem.console.client-id}, authorization code flow with PKCE, roles from the
 * access token), chosen for the console's page, its sign-out and the admin calls its page makes with
 * the session cookie. A bearer token or an {@code X-Admin-Token} goes to the default tenant, which
 * verifies access tokens for the API. Without a provider there is no sign-in.
 */
@ApplicationScoped
class ConsoleSignIn implements TenantConfigResolver {

    static final String TENANT = "console";
    static final String SIGN_OUT = ConsoleResource.PATH + "/sign-out";
    private static final Duration PROBE_EVERY = Duration.ofSeconds(5);
    private static final int PROBE_TIMEOUT_MS = 2000;
    private static final String UNAVAILABLE = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>idem · sign-in unavailable</title></head>
            <body><h1>Sign-in is unavailable</h1>
            <p>The identity provider this console signs in at does not answer. Sessions and access tokens
            issued before keep working until they expire; the API and the service run on.</p>
            <p>Reload this page once the provider is back. An operator who cannot wait uses the
            break-glass admin token, if one is configured (docs/OPERATIONS.md).</p></body></html>""";
    /** Quarkus' session cookie of this tenant. */
    private static final String SESSION_COOKIE = "q_session_" + TENANT;

    private final Optional<OidcTenantConfig> console;
    private final Optional<String> discovery;
    /** The provider's last answer to the probe, and when (nanoTime): probed at most every few seconds. */
    private volatile boolean answering = true;
    private volatile long probedAt = System.nanoTime() - PROBE_EVERY.toNanos();

    ConsoleSignIn(@ConfigProperty(name = "quarkus.oidc.auth-server-url") Optional<String> provider,
                  @ConfigProperty(name = "quarkus.oidc.roles.role-claim-path") List<String> roleClaims,
                  OpsConfig config) {
        OpsConfig.Console settings = config.console();
        this.discovery = provider.map(url -> url.replaceAll("/+$", "") + "/.well-known/openid-configuration");
        String secret = settings.sessionSecret().orElseGet(ConsoleSignIn::randomSecret);
        this.console = provider.map(url -> OidcTenantConfig.authServerUrl(url)
                .tenantId(TENANT)
                .applicationType(ApplicationType.WEB_APP)
                .clientId(settings.clientId())
                .authentication()
                    .pkceRequired()
                    .stateSecret(secret)
                    .cookiePath("/admin")
                    .cookieSameSite(CookieSameSite.LAX)
                    .cookieForceSecure(settings.secureCookie() && !LaunchMode.current().isDevOrTest())
                    .restorePathAfterRedirect()
                    .javaScriptAutoRedirect(false)
                    .end()
                .roles().source(Source.accesstoken)
                    .roleClaimPath(roleClaims)
                    .end()
                .tokenStateManager().encryptionSecret(secret).end()
                .logout().path(SIGN_OUT).postLogoutPath(ConsoleResource.PATH).end()
                .build());
    }

    /**
     * A visitor without a session would be sent to the provider's sign-in; when the provider does
     * not answer, the console says so instead of leaving the browser on an error of its own.
     */
    void register(@Observes Router router, Vertx vertx) {
        if (discovery.isEmpty()) {
            return;
        }
        HttpClient client = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout(PROBE_TIMEOUT_MS)
                .setIdleTimeout(PROBE_TIMEOUT_MS).setIdleTimeoutUnit(TimeUnit.MILLISECONDS));
        Handler<RoutingContext> check = routing -> {
            if (routing.request().getCookie(SESSION_COOKIE) != null) {
                routing.next();
                return;
            }
            providerAnswers(client).onComplete(answered -> {
                if (answered.succeeded() && answered.result()) {
                    routing.next();
                } else {
                    routing.response().setStatusCode(503).putHeader("Content-Type", "text/html; charset=utf-8")
                            .putHeader("Retry-After", "30").putHeader("Cache-Control", "no-store").end(UNAVAILABLE);
                }
            });
        };
        // ahead of Quarkus' authentication, which would send the browser to the provider
        router.get(ConsoleResource.PATH).order(-300).handler(check);
        router.get(ConsoleResource.PATH + "/").order(-300).handler(check);
    }

    private Future<Boolean> providerAnswers(HttpClient client) {
        if (System.nanoTime() - probedAt < PROBE_EVERY.toNanos()) {
            return Future.succeededFuture(answering);
        }
        return client.request(new RequestOptions().setAbsoluteURI(discovery.get()).setIdleTimeout(PROBE_TIMEOUT_MS))
                .compose(request -> request.send())
                .map(response -> response.statusCode() == 200)
                .otherwise(false)
                .onSuccess(answers -> {
                    answering = answers;
                    probedAt = System.nanoTime();
                });
    }

    /** Whether there is a provider to sign in at. */
    boolean enabled() {
        return console.isPresent();
    }

    @Override
    public Uni<OidcTenantConfig> resolve(RoutingContext routing, OidcRequestContext<OidcTenantConfig> request) {
        return Uni.createFrom().item(console.isPresent() && signsIn(routing) ? console.get() : null);
    }

    private static boolean signsIn(RoutingContext routing) {
        String path = routing.normalizedPath();
        if (!path.startsWith("/admin/") || routing.request().getHeader(HttpHeaders.AUTHORIZATION) != null
                || routing.request().getHeader(AdminAccess.TOKEN_HEADER) != null) {
            return false;
        }
        return path.equals(ConsoleResource.PATH) || path.equals(ConsoleResource.PATH + "/") || path.equals(SIGN_OUT)
                || routing.request().getCookie(SESSION_COOKIE) != null;
    }

    /**
     * The console's page and its sign-out ({@code quarkus.http.auth.permission.console} in
     * application.properties): open without a provider, as the page then asks for the admin token;
     * with one, an anonymous visitor is sent to the provider's sign-in.
     */
    @ApplicationScoped
    static class SignedIn implements HttpSecurityPolicy {
        private final boolean provider;

        SignedIn(ConsoleSignIn signIn) {
            this.provider = signIn.enabled();
        }

        @Override
        public Uni<CheckResult> checkPermission(RoutingContext request, Uni<SecurityIdentity> identity,
                                                AuthorizationRequestContext context) {
            return provider
                    ? identity.map(who -> who.isAnonymous() ? CheckResult.DENY : CheckResult.PERMIT)
                    : Uni.createFrom().item(CheckResult.PERMIT);
        }

        @Override
        public String name() {
            return "idem-console";
        }
    }

    private static String randomSecret() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
