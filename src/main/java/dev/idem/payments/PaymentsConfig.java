package dev.idem.payments;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** How payment notifications are authenticated: the signed callback's {@code idem.callback.*}, the gateways' {@code idem.gateways.*}. */
@ConfigMapping(prefix = "idem")
public interface PaymentsConfig {

    Callback callback();

    Gateways gateways();

    interface Callback {
        /** The HMAC key shared with the gateway. No default outside the dev and test profiles. */
        String secret();

        /**
         * Secrets still accepted while the gateway moves to {@link #secret()}: deliveries signed with
         * one of them are counted apart, so an operator sees when they can be dropped.
         */
        Optional<List<String>> previousSecrets();

        /** How far a callback's timestamp may be from now, either way (WeChat Pay's too). */
        @WithDefault("300s")
        Duration tolerance();
    }

    interface Gateways {
        WeChatPay wechatpay();

        Alipay alipay();
    }

    /**
     * WeChat Pay API v3 notifications. Without an APIv3 key and at least one platform key the gateway
     * is switched off (its path answers 404); with only one of them idem refuses to start.
     */
    interface WeChatPay {
        /** The merchant's APIv3 key, 32 bytes: it decrypts the notifications' {@code resource}. */
        @WithName("api-v3-key")
        Optional<String> apiV3Key();

        /**
         * The platform's public keys (PEM) by serial, the value of {@code Wechatpay-Serial}: a WeChat
         * Pay public key id or a platform certificate's serial. Several while WeChat Pay rotates them.
         */
        Map<String, String> platformKeys();
    }

    /**
     * Alipay's asynchronous notifications. Without an app id and Alipay's public key the gateway is
     * switched off (its path answers 404); with only one of them idem refuses to start.
     */
    interface Alipay {
        /** The application's {@code app_id}: a notification for another application is refused. */
        Optional<String> appId();

        /** Alipay's public key (not the application's own), PEM or the bare base64 the console shows. */
        Optional<String> publicKey();
    }
}
