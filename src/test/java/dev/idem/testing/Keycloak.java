package dev.idem.testing;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.Map;
import java.util.stream.Collectors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The realm {@code idem} of `./idem services keycloak` (127.0.0.1:8180), as callers meet it: its
 * users' and clients' access tokens, and tokens forged with the realm's own signing key, which the
 * script keeps in {@code ~/.cache/idem/keycloak/realm-key.pem} (the machine's, like the test clusters)
 * so that tests can sign what Keycloak never would.
 */
public final class Keycloak {

    public static final String REALM = "http://127.0.0.1:8180/realms/idem";
    public static final Path KEY = Path.of(System.getProperty("test.keycloak-key",
            System.getenv().getOrDefault("IDEM_CLUSTER_STATE", System.getProperty("user.home") + "/.cache/idem")
                    + "/keycloak/realm-key.pem"));

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    private Keycloak() {
    }

    /** A user's access token, through the loopback-only client {@code idem-test} (password grant). */
    public static String token(String user) {
        return tokenFor(Map.of("grant_type", "password", "client_id", "idem-test", "username", user, "password", user));
    }

    /** The confidential client {@code idem-ops}'s own token (client credentials): an operator's. */
    public static String opsToken() {
        return tokenFor(Map.of("grant_type", "client_credentials", "client_id", "idem-ops", "client_secret", "idem-ops-secret"));
    }

    /** The claims of a token, read without verifying it. */
    public static JsonObject claims(String token) {
        return new JsonObject(new String(Base64.getUrlDecoder().decode(token.split("\\.")[1]), StandardCharsets.UTF_8));
    }

    public static JsonObject header(String token) {
        return new JsonObject(new String(Base64.getUrlDecoder().decode(token.split("\\.")[0]), StandardCharsets.UTF_8));
    }

    /** {@code header} and {@code claims} signed RS256 with the realm's own key. */
    public static String signed(JsonObject header, JsonObject claims) {
        String content = encode(header) + "." + encode(claims);
        try {
            Signature rsa = Signature.getInstance("SHA256withRSA");
            rsa.initSign(privateKey());
            rsa.update(content.getBytes(StandardCharsets.US_ASCII));
            return content + "." + B64.encodeToString(rsa.sign());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code claims} signed HS256 with {@code secret} (the realm's public key, in the classic confusion attack). */
    public static String hmacSigned(JsonObject header, JsonObject claims, byte[] secret) {
        String content = encode(header) + "." + encode(claims);
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return content + "." + B64.encodeToString(mac.doFinal(content.getBytes(StandardCharsets.US_ASCII)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code header} and {@code claims} with no signature at all. */
    public static String unsigned(JsonObject header, JsonObject claims) {
        return encode(header) + "." + encode(claims) + ".";
    }

    /** The realm's published signing keys. */
    public static JsonArray jwks() {
        return new JsonObject(get(REALM + "/protocol/openid-connect/certs")).getJsonArray("keys");
    }

    /** The public key of the realm's signing key, as PEM text (what an attacker can fetch). */
    public static byte[] publicKeyPem() {
        try {
            return Files.readAllBytes(KEY.resolveSibling("realm-cert.pem"));
        } catch (IOException e) {
            throw new IllegalStateException("no realm certificate beside " + KEY + ": start ./idem services keycloak", e);
        }
    }

    public static String encode(JsonObject json) {
        return B64.encodeToString(json.encode().getBytes(StandardCharsets.UTF_8));
    }

    private static PrivateKey privateKey() throws Exception {
        String pem = Files.readString(KEY).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
    }

    private static String tokenFor(Map<String, String> form) {
        String body = form.entrySet().stream()
                .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(REALM + "/protocol/openid-connect/token"))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IllegalStateException("Keycloak refused " + form.get("grant_type") + ": " + response.body());
            }
            return new JsonObject(response.body()).getString("access_token");
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("Keycloak does not answer at " + REALM + " (./idem services keycloak)", e);
        }
    }

    private static String get(String url) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("Keycloak does not answer at " + url, e);
        }
    }
}
