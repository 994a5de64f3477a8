package dev.idem.payments;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The gateway signs {@code timestamp + "." + body} with HMAC-SHA256; the timestamp window stops
 * replays of old, captured deliveries. While the gateway rotates its secret, the previous ones are
 * accepted too. Every secret is computed and compared, in constant time, whichever matches: the
 * time taken does not tell which secret signed, nor how close a guess came.
 */
@ApplicationScoped
public class CallbackSignature {

    /** {@code VALID}: signed with the current secret; {@code VALID_PREVIOUS}: with a previous one. */
    public enum Check { VALID, VALID_PREVIOUS, MISSING, MALFORMED, STALE, MISMATCH }

    private static final String ALGORITHM = "HmacSHA256";

    private final Duration tolerance;
    private final Clock clock;
    /** Keyed Macs per thread, the current secret's first, so that no request keys a new one. */
    private final ThreadLocal<Mac[]> macs;

    @Inject
    CallbackSignature(PaymentsConfig config, Clock clock) {
        this(config.callback().secret(), config.callback().previousSecrets().orElse(List.of()),
                config.callback().tolerance(), clock);
    }

    CallbackSignature(String secret, Duration tolerance, Clock clock) {
        this(secret, List.of(), tolerance, clock);
    }

    CallbackSignature(String secret, List<String> previousSecrets, Duration tolerance, Clock clock) {
        List<SecretKeySpec> keys = new ArrayList<>();
        keys.add(key(secret));
        previousSecrets.stream().map(String::trim).filter(s -> !s.isEmpty()).map(CallbackSignature::key)
                .forEach(keys::add);
        this.tolerance = tolerance;
        this.clock = clock;
        this.macs = ThreadLocal.withInitial(() -> keys.stream().map(CallbackSignature::keyed).toArray(Mac[]::new));
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
        Mac[] keyed = macs.get();
        String signedTimestamp = timestamp.trim();
        // no early return: every secret costs the same whether or not an earlier one matched
        int current = MessageDigest.isEqual(mac(keyed[0], signedTimestamp, body), given) ? 1 : 0;
        int previous = 0;
        for (int i = 1; i < keyed.length; i++) {
            previous |= MessageDigest.isEqual(mac(keyed[i], signedTimestamp, body), given) ? 1 : 0;
        }
        return current == 1 ? Check.VALID : previous == 1 ? Check.VALID_PREVIOUS : Check.MISMATCH;
    }

    /** doFinal leaves the Mac reset and keyed, ready for the next body. */
    private static byte[] mac(Mac mac, String timestamp, byte[] body) {
        mac.update(timestamp.getBytes(StandardCharsets.US_ASCII));
        mac.update((byte) '.');
        return mac.doFinal(body);
    }

    private static SecretKeySpec key(String secret) {
        return new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), ALGORITHM);
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
