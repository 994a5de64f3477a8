package dev.idem.payments.wechatpay;

import dev.idem.payments.Rsa;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

/**
 * WeChat Pay signs {@code Wechatpay-Timestamp + "\n" + Wechatpay-Nonce + "\n" + body + "\n"} with
 * SHA256withRSA under the platform key named by {@code Wechatpay-Serial}. The timestamp window
 * stops replays of captured deliveries; every retry is signed afresh.
 */
final class WeChatPaySignature {

    enum Check {
        VALID(""),
        MISSING("Wechatpay-Serial, Wechatpay-Timestamp, Wechatpay-Nonce and Wechatpay-Signature are required"),
        UNKNOWN_SERIAL("Wechatpay-Serial names no configured platform key"),
        MALFORMED("Wechatpay-Timestamp must be epoch seconds"),
        STALE("Wechatpay-Timestamp is outside the accepted window"),
        MISMATCH("Wechatpay-Signature does not verify");

        final String message;

        Check(String message) {
            this.message = message;
        }
    }

    private final Duration tolerance;
    private final Clock clock;

    WeChatPaySignature(Duration tolerance, Clock clock) {
        this.tolerance = tolerance;
        this.clock = clock;
    }

    Check verify(WeChatPayKeys keys, String serial, String timestamp, String nonce, String signature, byte[] body) {
        if (blank(serial) || blank(timestamp) || blank(nonce) || blank(signature)) {
            return Check.MISSING;
        }
        Optional<PublicKey> key = keys.platformKey(serial);
        if (key.isEmpty()) {
            return Check.UNKNOWN_SERIAL;
        }
        long seconds;
        try {
            seconds = Long.parseLong(timestamp.trim());
        } catch (NumberFormatException notNumber) {
            return Check.MALFORMED;
        }
        long now = clock.instant().getEpochSecond();
        if (seconds < now - tolerance.toSeconds() || seconds > now + tolerance.toSeconds()) {
            return Check.STALE;
        }
        return Rsa.verifies(key.get(), message(timestamp, nonce, body), signature) ? Check.VALID : Check.MISMATCH;
    }

    /** The signed message: the headers exactly as received, the body's bytes as they came. */
    static byte[] message(String timestamp, String nonce, byte[] body) {
        ByteArrayOutputStream message = new ByteArrayOutputStream(body.length + 64);
        message.writeBytes((timestamp + "\n" + nonce + "\n").getBytes(StandardCharsets.UTF_8));
        message.writeBytes(body);
        message.write('\n');
        return message.toByteArray();
    }

    private static boolean blank(String header) {
        return header == null || header.isBlank();
    }
}
