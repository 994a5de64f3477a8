package dev.idem.payments;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import io.smallrye.config.WithParentName;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Payments: how notifications are authenticated (the signed callback's {@code idem.callback.*},
 * the gateways' {@code idem.gateways.*}), how idem asks a gateway about an order whose notification
 * did not come ({@code idem.gateways.<gateway>.query.*} and the keys that sign the asking), and how
 * long an order waits for its payment ({@code idem.orders.*}).
 */
@ConfigMapping(prefix = "idem")
public interface PaymentsConfig {

    Callback callback();

    Gateways gateways();

    Orders orders();

    /** Orders, {@code idem.orders.*}. */
    interface Orders {
        /**
         * How long an order waits for its payment: its gateways are not asked about it after that.
         * Nothing closes an expired order yet; a notification that comes later still pays it.
         */
        @WithDefault("2h")
        Duration expiry();
    }

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

        /** Asking WeChat Pay about an order, as the merchant: {@code idem.gateways.wechatpay.api-base, mchid, …}. */
        @WithParentName
        WeChatPayMerchant merchant();
    }

    /** WeChat Pay API v3's query by out_trade_no, asked as the merchant. */
    interface WeChatPayMerchant {
        @WithDefault("https://api.mch.weixin.qq.com")
        URI apiBase();

        /** The merchant id ({@code mchid}): who asks. The query needs it and the two below. */
        Optional<String> mchid();

        /** The serial number of the merchant API certificate whose private key signs the requests. */
        Optional<String> merchantSerial();

        /** The merchant API private key (PKCS#8 PEM, {@code apiclient_key.pem}) that signs the requests. */
        Optional<String> merchantPrivateKey();

        Query query();
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

        /** Asking Alipay about an order, as the application: {@code idem.gateways.alipay.gateway-url, …}. */
        @WithParentName
        AlipayApp app();
    }

    /** Alipay's {@code alipay.trade.query}, asked as the application ({@code idem.gateways.alipay.app-id}). */
    interface AlipayApp {
        @WithDefault("https://openapi.alipay.com/gateway.do")
        URI gatewayUrl();

        /** The application's private key (PKCS#8, PEM or bare base64) that signs the requests. */
        Optional<String> appPrivateKey();

        Query query();
    }

    /**
     * When orders still waiting for their payment are asked of one gateway: first
     * {@link #firstDelay()} after they were made, then with backoff up to {@link #maxInterval()},
     * until they expire ({@code idem.orders.expiry}).
     */
    interface Query {
        /**
         * Unset: on when the gateway is on and the keys that sign its requests are set. {@code true}
         * without them stops the start.
         */
        Optional<Boolean> enabled();

        @WithDefault("5m")
        Duration firstDelay();

        /** The backoff between two queries of one order grows up to this. */
        @WithDefault("30m")
        Duration maxInterval();

        /** Queries per second at most, per instance. */
        @WithDefault("20")
        int rate();
    }
}
