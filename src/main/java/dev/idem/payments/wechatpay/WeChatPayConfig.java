package dev.idem.payments.wechatpay;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithName;
import java.util.Map;
import java.util.Optional;

/**
 * WeChat Pay API v3 notifications. Without an APIv3 key and at least one platform key the gateway
 * is switched off (its path answers 404); with only one of them idem refuses to start.
 */
@ConfigMapping(prefix = "idem.gateways.wechatpay")
public interface WeChatPayConfig {

    /** The merchant's APIv3 key, 32 bytes: it decrypts the notifications' {@code resource}. */
    @WithName("api-v3-key")
    Optional<String> apiV3Key();

    /**
     * The platform's public keys (PEM) by serial, the value of {@code Wechatpay-Serial}: a WeChat
     * Pay public key id or a platform certificate's serial. Several while WeChat Pay rotates them.
     */
    Map<String, String> platformKeys();
}
