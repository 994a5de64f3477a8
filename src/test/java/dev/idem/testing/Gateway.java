package dev.idem.testing;

import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** Signs callbacks the way a payment gateway does, independently of the service's own verifier. */
public final class Gateway {

    public static final String SECRET = "test-callback-secret";

    private Gateway() {}

    public static String callback(String tradeNo, String orderId, long amountCents, String status) {
        return "{\"tradeNo\":\"" + tradeNo + "\",\"orderId\":\"" + orderId + "\",\"amountCents\":" + amountCents
                + ",\"status\":\"" + status + "\",\"paidAt\":\"2026-11-30T10:00:00Z\"}";
    }

    public static long now() {
        return Instant.now().getEpochSecond();
    }

    public static String sign(String secret, long timestamp, String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return HexFormat.of().formatHex(mac.doFinal((timestamp + "." + body).getBytes(StandardCharsets.UTF_8)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Signs {@code post} (carrying {@code body}) now: each delivery, retries included, is signed afresh. */
    public static HttpRequest signed(HttpRequest.Builder post, String secret, String body) {
        long timestamp = now();
        return post.header("X-Pay-Timestamp", Long.toString(timestamp))
                .header("X-Pay-Signature", sign(secret, timestamp, body))
                .build();
    }

    public static String sign(long timestamp, String body) {
        return sign(SECRET, timestamp, body);
    }
}
