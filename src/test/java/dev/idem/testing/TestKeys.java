package dev.idem.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.Base64;
import java.util.function.Supplier;

/**
 * Keys for the gateway simulators. The ones the test profile configures ({@link GatewaysOn}) are
 * generated for the build, into {@code target/gateway-test-keys/}: none is committed, and each is
 * made once, by the first to need it, so that the profile (which configures the public half) and
 * the simulators (which sign with the private half) agree even from different class loaders.
 * {@link #generate()} makes keys the service has never seen.
 */
public final class TestKeys {

    private static final Path DIR = Path.of(System.getProperty("basedir", "."), "target", "gateway-test-keys");
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String PRINTABLE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    private TestKeys() {}

    /** The private half of the build's pair called {@code name}. */
    public static PrivateKey privateKey(String name) {
        String base64 = privatePem(name)
                .replaceAll("-----(BEGIN|END) PRIVATE KEY-----", "").replaceAll("\\s", "");
        try {
            return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The private half of the build's pair called {@code name}, as PKCS#8 PEM: a merchant's own key, for its configuration. */
    public static String privatePem(String name) {
        return once(name + "-private.pem", TestKeys::newPrivatePem);
    }

    /** The public half of the build's pair called {@code name}, as PEM, the way a gateway's console gives it. */
    public static String publicPem(String name) {
        return pem(publicKey(name));
    }

    /** The public half of the build's pair called {@code name}. */
    public static PublicKey publicKey(String name) {
        RSAPrivateCrtKey key = (RSAPrivateCrtKey) privateKey(name);
        try {
            return KeyFactory.getInstance("RSA")
                    .generatePublic(new RSAPublicKeySpec(key.getModulus(), key.getPublicExponent()));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The build's 32-character secret called {@code name} (an APIv3 key). */
    public static String secret(String name) {
        return once(name + ".key", () -> randomString(32));
    }

    /** Whether {@code base64Signature} is {@code content}'s SHA256withRSA signature by {@code key}'s pair. */
    public static boolean verifies(PublicKey key, byte[] content, String base64Signature) {
        try {
            Signature verifier = Signature.getInstance("SHA256withRSA");
            verifier.initVerify(key);
            verifier.update(content);
            return verifier.verify(Base64.getDecoder().decode(base64Signature));
        } catch (GeneralSecurityException | IllegalArgumentException notASignature) {
            return false;
        }
    }

    public static KeyPair generate() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String pem(PublicKey key) {
        return "-----BEGIN PUBLIC KEY-----\n" + base64Lines(key.getEncoded()) + "\n-----END PUBLIC KEY-----\n";
    }

    /** SHA-1 of {@code bytes}, lower-case hex, as WeChat Pay gives a bill's hash. */
    public static String sha1Hex(byte[] bytes) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-1").digest(bytes));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String randomString(int length) {
        StringBuilder s = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            s.append(PRINTABLE.charAt(RANDOM.nextInt(PRINTABLE.length())));
        }
        return s.toString();
    }

    private static String newPrivatePem() {
        return "-----BEGIN PRIVATE KEY-----\n" + base64Lines(generate().getPrivate().getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
    }

    private static String base64Lines(byte[] der) {
        return Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    }

    /** The file's text; written first if missing, by a move that never replaces what another wrote. */
    private static synchronized String once(String file, Supplier<String> content) {
        Path path = DIR.resolve(file);
        try {
            if (!Files.exists(path)) {
                Files.createDirectories(DIR);
                Path written = Files.writeString(Files.createTempFile(DIR, file, ".tmp"), content.get());
                try {
                    Files.move(written, path);
                } catch (FileAlreadyExistsException another) {
                    Files.delete(written);
                }
            }
            return Files.readString(path, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalStateException("test key " + path, e);
        }
    }
}
