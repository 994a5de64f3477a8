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
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;
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
    /** Quarkus' session cookie of this tenant. */
    private static final String SESSION_COOKIE = "q_session_" + TENANT;

    private final Optional<OidcTenantConfig> console;

    ConsoleSignIn(@ConfigProperty(name = "quarkus.oidc.auth-server-url") Optional<String> provider,
                  @ConfigProperty(name = "quarkus.oidc.roles.role-claim-path") Optional<String> roleClaims,
                  OpsConfig config) {
        OpsConfig.Console settings = config.console();
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
                    .roleClaimPath(roleClaims.orElse("realm_access/roles,groups").split(","))
                    .end()
                .tokenStateManager().encryptionSecret(secret).end()
                .logout().path(SIGN_OUT).postLogoutPath(ConsoleResource.PATH).end()
                .build());
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
