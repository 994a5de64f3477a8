package dev.idem.payments.alipay;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.payments.PaymentsConfig;
import dev.idem.testing.TestKeys;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AlipayNotificationsTest {

    static PaymentsConfig.Alipay config(Optional<String> appId, Optional<String> publicKey) {
        return new PaymentsConfig.Alipay() {
            public Optional<String> appId() {
                return appId;
            }

            public Optional<String> publicKey() {
                return publicKey;
            }

            public PaymentsConfig.AlipayApp app() {
                throw new UnsupportedOperationException("the notifications do not ask Alipay");
            }
        };
    }

    @Test
    void offWithoutKeysOnWithBothAndAHalfOrBrokenConfigurationStopsTheStart() {
        String pem = TestKeys.publicPem("alipay");
        String bare = pem.replaceAll("-----(BEGIN|END) PUBLIC KEY-----", "").replaceAll("\\s", "");

        assertFalse(new AlipayNotifications(config(Optional.empty(), Optional.empty())).enabled());
        assertTrue(new AlipayNotifications(config(Optional.of("2021"), Optional.of(pem))).enabled());
        assertTrue(new AlipayNotifications(config(Optional.of("2021"), Optional.of(bare))).enabled(),
                "the bare base64 that Alipay's console shows");
        assertThrows(IllegalStateException.class,
                () -> new AlipayNotifications(config(Optional.of("2021"), Optional.empty())));
        assertThrows(IllegalStateException.class,
                () -> new AlipayNotifications(config(Optional.empty(), Optional.of(pem))));
        IllegalArgumentException notAKey = assertThrows(IllegalArgumentException.class,
                () -> new AlipayNotifications(config(Optional.of("2021"), Optional.of("secret-looking-text"))));
        assertFalse(notAKey.getMessage().contains("secret-looking-text"));
    }
}
