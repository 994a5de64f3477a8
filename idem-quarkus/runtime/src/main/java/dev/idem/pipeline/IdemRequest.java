package dev.idem.pipeline;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/**
 * One delivery as the pipeline sees it: the key that identifies the work within its scope and a
 * fingerprint of the payload, so that a reused key with other content is told apart.
 */
public record IdemRequest(String scope, String key, String fingerprint) {

    public IdemRequest {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
    }

    /** One digest per thread: looking SHA-256 up among the providers costs more than hashing a delivery. */
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    });

    /** SHA-256 over the parts, each length-prefixed so that no two lists collide. */
    public static String fingerprint(Object... parts) {
        MessageDigest digest = SHA_256.get();
        digest.reset();
        for (Object part : parts) {
            byte[] bytes = String.valueOf(part).getBytes(StandardCharsets.UTF_8);
            digest.update((bytes.length + ":").getBytes(StandardCharsets.US_ASCII));
            digest.update(bytes);
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /** SHA-256 of {@code bytes}, in hex. */
    static String digest(byte[] bytes) {
        MessageDigest digest = SHA_256.get();
        digest.reset();
        return HexFormat.of().formatHex(digest.digest(bytes));
    }
}
