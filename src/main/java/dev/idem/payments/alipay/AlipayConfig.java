package dev.idem.payments.alipay;

import io.smallrye.config.ConfigMapping;
import java.util.Optional;

/**
 * Alipay's asynchronous notifications. Without an app id and Alipay's public key the gateway is
 * switched off (its path answers 404); with only one of them idem refuses to start.
 */
@ConfigMapping(prefix = "idem.gateways.alipay")
public interface AlipayConfig {

    /** The application's {@code app_id}: a notification for another application is refused. */
    Optional<String> appId();

    /** Alipay's public key (not the application's own), PEM or the bare base64 the console shows. */
    Optional<String> publicKey();
}
