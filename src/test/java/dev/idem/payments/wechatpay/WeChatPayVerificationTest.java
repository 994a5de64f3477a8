package dev.idem.payments.wechatpay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.payments.PaymentsConfig;
import dev.idem.testing.TestKeys;
import dev.idem.testing.WeChatPaySimulator;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The signature and the resource's encryption, checked against the simulator with keys made here. */
class WeChatPayVerificationTest {

    static final long NOW = 1_796_000_000L;
    static final String SERIAL = "3A1B2C";
    static final String BODY = "{\"id\":\"EV-1\",\"summary\":\"支付成功\"}";

    final KeyPair platform = TestKeys.generate();
    final WeChatPaySimulator wechat = new WeChatPaySimulator(SERIAL, platform.getPrivate(), "0123456789abcdef0123456789abcdef");
    final WeChatPayKeys keys = WeChatPayKeys.from(config(Optional.of("0123456789abcdef0123456789abcdef"),
            Map.of(SERIAL.toLowerCase(), TestKeys.pem(platform.getPublic())))).orElseThrow();
    final WeChatPaySignature signature = new WeChatPaySignature(Duration.ofSeconds(300),
            Clock.fixed(Instant.ofEpochSecond(NOW), ZoneOffset.UTC));

    static PaymentsConfig.WeChatPay config(Optional<String> apiV3Key, Map<String, String> platformKeys) {
        return new PaymentsConfig.WeChatPay() {
            public Optional<String> apiV3Key() {
                return apiV3Key;
            }

            public Map<String, String> platformKeys() {
                return platformKeys;
            }

            public PaymentsConfig.WeChatPayMerchant merchant() {
                throw new UnsupportedOperationException("the notifications do not ask WeChat Pay");
            }
        };
    }

    WeChatPaySignature.Check verify(WeChatPaySimulator.Headers h, String body) {
        return signature.verify(keys, h.serial(), h.timestamp(), h.nonce(), h.signature(),
                body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theGatewaysSignatureVerifiesWithinTheWindowOnly() {
        assertEquals(WeChatPaySignature.Check.VALID, verify(wechat.sign(BODY, NOW), BODY));
        assertEquals(WeChatPaySignature.Check.VALID, verify(wechat.sign(BODY, NOW - 300), BODY));
        assertEquals(WeChatPaySignature.Check.VALID, verify(wechat.sign(BODY, NOW + 300), BODY));
        assertEquals(WeChatPaySignature.Check.STALE, verify(wechat.sign(BODY, NOW - 301), BODY));
        assertEquals(WeChatPaySignature.Check.STALE, verify(wechat.sign(BODY, NOW + 301), BODY));
    }

    @Test
    void aSerialSetThroughAnEnvironmentVariableStillNamesItsKey() {
        // IDEM_GATEWAYS_WECHATPAY_PLATFORM_KEYS__PUB_KEY_ID_0114_ reaches the map as pub.key.id.0114
        WeChatPayKeys fromEnvironment = WeChatPayKeys.from(config(Optional.of("0123456789abcdef0123456789abcdef"),
                Map.of("pub.key.id.0114", TestKeys.pem(platform.getPublic())))).orElseThrow();

        assertTrue(fromEnvironment.platformKey("PUB_KEY_ID_0114").isPresent());
        assertTrue(fromEnvironment.platformKey("PUB_KEY_ID_0115").isEmpty());
    }

    @Test
    void anythingChangedOrMissingIsRefused() {
        WeChatPaySimulator.Headers h = wechat.sign(BODY, NOW);
        assertEquals(WeChatPaySignature.Check.MISMATCH, verify(h, BODY + " "));
        assertEquals(WeChatPaySignature.Check.MISMATCH,
                verify(new WeChatPaySimulator.Headers(h.serial(), h.timestamp(), h.nonce() + "x", h.signature()), BODY));
        assertEquals(WeChatPaySignature.Check.MISMATCH,
                verify(new WeChatPaySimulator.Headers(h.serial(), h.timestamp(), h.nonce(), "not base64"), BODY));
        assertEquals(WeChatPaySignature.Check.MISMATCH,
                verify(wechat.withPlatformKey(TestKeys.generate().getPrivate()).sign(BODY, NOW), BODY));
        assertEquals(WeChatPaySignature.Check.UNKNOWN_SERIAL, verify(wechat.withSerial("3A1B2D").sign(BODY, NOW), BODY));
        assertEquals(WeChatPaySignature.Check.MALFORMED,
                verify(new WeChatPaySimulator.Headers(h.serial(), "yesterday", h.nonce(), h.signature()), BODY));
        assertEquals(WeChatPaySignature.Check.MISSING,
                verify(new WeChatPaySimulator.Headers(h.serial(), h.timestamp(), null, h.signature()), BODY));
        assertEquals(WeChatPaySignature.Check.MISSING,
                verify(new WeChatPaySimulator.Headers(" ", h.timestamp(), h.nonce(), h.signature()), BODY));
    }

    @Test
    void theResourceOpensWithTheApiV3KeyItsNonceAndItsAssociatedDataOnly() {
        byte[] plain = "{\"trade_state\":\"SUCCESS\"}".getBytes(StandardCharsets.UTF_8);
        String sealed = Base64.getEncoder().encodeToString(wechat.encrypt(plain, "0123456789ab", "transaction"));

        assertArrayEquals(plain, WeChatPayResourceCipher.open(keys.apiV3Key(), resource(sealed, "0123456789ab", "transaction"))
                .orElseThrow());
        assertTrue(WeChatPayResourceCipher.open(keys.apiV3Key(), resource(sealed, "0123456789ac", "transaction")).isEmpty());
        assertTrue(WeChatPayResourceCipher.open(keys.apiV3Key(), resource(sealed, "0123456789ab", "")).isEmpty());
        assertTrue(WeChatPayResourceCipher.open(keys.apiV3Key(), resource(sealed, "0123456789ab", null)).isEmpty());
        assertTrue(WeChatPayResourceCipher.open(keys.apiV3Key(), resource("AAAA", "0123456789ab", "transaction")).isEmpty());
        assertTrue(WeChatPayResourceCipher.open(keys.apiV3Key(), resource("%%%", "0123456789ab", "transaction")).isEmpty());
        assertTrue(WeChatPayResourceCipher.open(keys.apiV3Key(), resource(sealed, "", "transaction")).isEmpty());
    }

    static WeChatPayNotification.Resource resource(String ciphertext, String nonce, String associatedData) {
        return new WeChatPayNotification.Resource("AEAD_AES_256_GCM", ciphertext, associatedData, "transaction", nonce);
    }

    @Test
    void aGatewayIsOffWithoutKeysAndAHalfOrBrokenConfigurationStopsTheStart() {
        String pem = TestKeys.pem(platform.getPublic());
        assertTrue(WeChatPayKeys.from(config(Optional.empty(), Map.of())).isEmpty());
        assertThrows(IllegalStateException.class, () -> WeChatPayKeys.from(config(Optional.of("k".repeat(32)), Map.of())));
        assertThrows(IllegalStateException.class, () -> WeChatPayKeys.from(config(Optional.empty(), Map.of("S", pem))));
        IllegalStateException shortKey = assertThrows(IllegalStateException.class,
                () -> WeChatPayKeys.from(config(Optional.of("short-secret-key"), Map.of("S", pem))));
        assertFalse(shortKey.getMessage().contains("short-secret-key"));
        IllegalArgumentException notAKey = assertThrows(IllegalArgumentException.class,
                () -> WeChatPayKeys.from(config(Optional.of("k".repeat(32)), Map.of("S", "secret-looking-text"))));
        assertFalse(notAKey.getMessage().contains("secret-looking-text"));
    }
}
