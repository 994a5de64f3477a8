package dev.idem.payments.wechatpay;

import dev.idem.payments.PaymentsConfig;
import dev.idem.payments.Rsa;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import javax.crypto.spec.SecretKeySpec;

/**
 * The configured keys, read once at start-up. A serial is a certificate's hex serial or a public
 * key id ({@code PUB_KEY_ID_...}): neither has a dot nor depends on case, so serials are matched
 * ignoring case with dots read as underscores, which is what an environment variable's name
 * ({@code IDEM_GATEWAYS_WECHATPAY_PLATFORM_KEYS__<SERIAL>_}) leaves of them.
 */
record WeChatPayKeys(Map<String, PublicKey> platformKeys, SecretKeySpec apiV3Key) {

    static final int API_V3_KEY_BYTES = 32;

    /** Empty when the gateway is not configured; a half or broken configuration stops the start. */
    static Optional<WeChatPayKeys> from(PaymentsConfig.WeChatPay config) {
        Optional<String> apiV3Key = config.apiV3Key().filter(key -> !key.isBlank());
        Map<String, String> pems = config.platformKeys();
        if (apiV3Key.isEmpty() && pems.isEmpty()) {
            return Optional.empty();
        }
        if (apiV3Key.isEmpty() || pems.isEmpty()) {
            throw new IllegalStateException("WeChat Pay needs both idem.gateways.wechatpay.api-v3-key and at least "
                    + "one idem.gateways.wechatpay.platform-keys.\"<serial>\"; set both, or neither to switch it off");
        }
        byte[] key = apiV3Key.get().getBytes(StandardCharsets.UTF_8);
        if (key.length != API_V3_KEY_BYTES) {
            throw new IllegalStateException(
                    "idem.gateways.wechatpay.api-v3-key must be " + API_V3_KEY_BYTES + " bytes");
        }
        Map<String, PublicKey> keys = new HashMap<>();
        pems.forEach((serial, pem) -> keys.put(normalized(serial),
                Rsa.publicKey("idem.gateways.wechatpay.platform-keys.\"" + serial + "\"", pem)));
        return Optional.of(new WeChatPayKeys(Map.copyOf(keys), new SecretKeySpec(key, "AES")));
    }

    Optional<PublicKey> platformKey(String serial) {
        return Optional.ofNullable(platformKeys.get(normalized(serial)));
    }

    static String normalized(String serial) {
        return serial.trim().toUpperCase(Locale.ROOT).replace('.', '_');
    }
}
