package dev.idem.ops;

import io.quarkus.security.identity.SecurityIdentity;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * Who calls the admin API: the subject and name of a verified token (or of the console's
 * sign-in), and the idem roles it holds. {@code viewer} reads, {@code operator} also changes.
 */
public record Operator(String subject, String name, Set<String> roles) {

    public static final String VIEWER = "idem-viewer";
    public static final String OPERATOR = "idem-operator";

    /** The holder of the break-glass token ({@code idem.admin.token}). */
    static final Operator ADMIN_TOKEN = new Operator("admin-token", "break-glass admin token", Set.of(OPERATOR));

    public boolean mayRead() {
        return roles.contains(VIEWER) || roles.contains(OPERATOR);
    }

    public boolean mayChange() {
        return roles.contains(OPERATOR);
    }

    /** What the console shows of who is signed in. */
    public JsonObject toJson() {
        return new JsonObject().put("subject", subject).put("name", name)
                .put("roles", new JsonArray(List.copyOf(roles)))
                .put("role", mayChange() ? "operator" : mayRead() ? "viewer" : "none");
    }

    /** A verified identity: only its idem roles are kept. */
    static Operator of(SecurityIdentity identity) {
        String subject = identity.getPrincipal().getName();
        String name = null;
        if (identity.getPrincipal() instanceof JsonWebToken token) {
            subject = Optional.ofNullable(token.getSubject()).orElse(subject);
            name = Optional.<String>ofNullable(token.getClaim("name"))
                    .orElse(token.getClaim("preferred_username"));
        }
        return new Operator(subject, name, idemRoles(identity.getRoles()));
    }

    /**
     * What a refused bearer token claims, read without trusting it (its signature, issuer or
     * audience did not verify): enough for the audit trail to say who seemed to try. Empty when
     * the token cannot be read as a JWT at all.
     */
    static Optional<Operator> claimedBy(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return Optional.empty();
        }
        String[] parts = authorization.substring(7).trim().split("\\.");
        if (parts.length < 2) {
            return Optional.empty();
        }
        try {
            JsonObject claims = new JsonObject(new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8));
            String subject = claims.getValue("sub") instanceof String sub ? sub : null;
            if (subject == null || subject.isBlank()) {
                return Optional.empty();
            }
            Set<String> roles = new TreeSet<>();
            JsonObject realm = claims.getValue("realm_access") instanceof JsonObject r ? r : new JsonObject();
            if (realm.getValue("roles") instanceof JsonArray claimed) {
                claimed.forEach(role -> roles.add(String.valueOf(role)));
            }
            String name = claims.getValue("name") instanceof String n ? n
                    : claims.getValue("preferred_username") instanceof String u ? u : null;
            return Optional.of(new Operator(cut(subject), name == null ? null : cut(name), idemRoles(roles)));
        } catch (RuntimeException unreadable) {
            return Optional.empty();
        }
    }

    private static Set<String> idemRoles(Set<String> roles) {
        Set<String> kept = new TreeSet<>();
        for (String role : List.of(VIEWER, OPERATOR)) {
            if (roles.contains(role)) {
                kept.add(role);
            }
        }
        return kept;
    }

    /** A forged token's claims are the caller's words: bounded before they are stored. */
    private static String cut(String value) {
        return value.length() <= 200 ? value : value.substring(0, 200);
    }
}
