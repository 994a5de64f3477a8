package dev.idem.payments;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The gateway signs {@code timestamp + "." + body} with HMAC-SHA256; the timestamp window stops
 * replays of old, captured deliveries. Comparison is constant-time.
 */
@ApplicationScoped
public class CallbackSignature {

    public enum Check { VALID, MISSING, MALFORMED, STALE, MISMATCH }

    private static final String ALGORITHM = "HmacSHA256";

    private final Duration tolerance;
    private final Clock clock;
    /** A keyed Mac per thread, so that no request looks the algorithm up and keys a new one. */
    private final ThreadLocal<Mac> macs;

    @Inject
    CallbackSignature(CallbackConfig config, Clock clock) {
        this(config.secret(), config.tolerance(), clock);
    }

    CallbackSignature(String secret, Duration tolerance, Clock clock) {
        SecretKeySpec key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), ALGORITHM);
        this.tolerance = tolerance;
        this.clock = clock;
        this.macs = ThreadLocal.withInitial(() -> keyed(key));
    }

    public Check verify(String timestamp, String signature, byte[] body) {
        if (timestamp == null || signature == null || timestamp.isBlank() || signature.isBlank()) {
            return Check.MISSING;
        }
        long seconds;
        byte[] given;
        try {
            seconds = Long.parseLong(timestamp.trim());
            given = HexFormat.of().parseHex(signature.trim());
        } catch (IllegalArgumentException notNumberOrHex) {
            return Check.MALFORMED;
        }
        long now = clock.instant().getEpochSecond();
        if (seconds < now - tolerance.toSeconds() || seconds > now + tolerance.toSeconds()) {
            return Check.STALE;
        }
        return MessageDigest.isEqual(mac(timestamp.trim(), body), given) ? Check.VALID : Check.MISMATCH;
    }

    /** The lowercase hex signature of a delivery, as the gateway computes it. */
    public String sign(long epochSeconds, byte[] body) {
        return HexFormat.of().formatHex(mac(Long.toString(epochSeconds), body));
    }

    /** doFinal leaves the Mac reset and keyed, ready for the next body. */
    private byte[] mac(String timestamp, byte[] body) {
        Mac mac = macs.get();
        mac.update(timestamp.getBytes(StandardCharsets.US_ASCII));
        mac.update((byte) '.');
        return mac.doFinal(body);
    }

    private static Mac keyed(SecretKeySpec key) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac;
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }
}
