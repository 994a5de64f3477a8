package dev.idem.payments.query;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;

/**
 * The active query of the gateways, {@code idem.gateways.<gateway>.*} beside the keys of their
 * notifications: where each gateway's API answers, the keys that sign what idem asks of it, and
 * when orders are asked.
 */
@ConfigMapping(prefix = "idem.gateways")
public interface GatewayQueriesConfig {

    WeChatPay wechatpay();

    Alipay alipay();

    /** WeChat Pay API v3's query by out_trade_no, asked as the merchant. */
    interface WeChatPay {
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

    /** Alipay's {@code alipay.trade.query}, asked as the application ({@code idem.gateways.alipay.app-id}). */
    interface Alipay {
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
