package dev.idem.payments.wechatpay;

import dev.idem.payments.PaymentsConfig;
import dev.idem.payments.Notice;
import dev.idem.pipeline.StrictJson;
import dev.idem.pipeline.StrictJson.Parsed;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.util.Optional;

/**
 * Reads a WeChat Pay API v3 notification at the edge: signature first (nothing unauthenticated is
 * parsed further), then the body, then the decrypted transaction. Built at start-up, so that a
 * broken configuration stops the service rather than the first notification.
 */
@Startup
@ApplicationScoped
public class WeChatPayNotifications {

    private static final String TRANSACTION = "transaction";

    private final Optional<WeChatPayKeys> keys;
    private final WeChatPaySignature signature;
    private final StrictJson json;

    WeChatPayNotifications(PaymentsConfig config, Clock clock, StrictJson json) {
        this.keys = WeChatPayKeys.from(config.gateways().wechatpay());
        this.signature = new WeChatPaySignature(config.callback().tolerance(), clock);
        this.json = json;
    }

    /** Off when its keys are not configured: its path answers 404. */
    public boolean enabled() {
        return keys.isPresent();
    }

    /** The platform's keys verify the query's answers too. */
    Optional<WeChatPayKeys> keys() {
        return keys;
    }

    public Notice read(String serial, String timestamp, String nonce, String signed, byte[] body) {
        if (keys.isEmpty()) {
            return new Notice.Unauthentic("WeChat Pay is not configured");
        }
        WeChatPaySignature.Check check = signature.verify(keys.get(), serial, timestamp, nonce, signed, body);
        if (check != WeChatPaySignature.Check.VALID) {
            return new Notice.Unauthentic(check.message);
        }
        Parsed<WeChatPayNotification> parsed =
                json.read(body, WeChatPayNotification.class, notification -> Optional.empty());
        if (parsed instanceof Parsed.Invalid<WeChatPayNotification> invalid) {
            return new Notice.Unreadable(invalid.detail());
        }
        WeChatPayNotification.Resource resource = ((Parsed.Valid<WeChatPayNotification>) parsed).value().resource();
        if (resource == null) {
            return new Notice.Unreadable("the notification has no resource");
        }
        if (!WeChatPayResourceCipher.ALGORITHM.equals(resource.algorithm())) {
            return new Notice.Unreadable("resource.algorithm must be " + WeChatPayResourceCipher.ALGORITHM);
        }
        Optional<byte[]> plain = WeChatPayResourceCipher.open(keys.get().apiV3Key(), resource);
        if (plain.isEmpty()) {
            return new Notice.Unreadable("resource does not decrypt with the APIv3 key");
        }
        if (!TRANSACTION.equals(resource.originalType())) {
            return new Notice.Ignored("resource.original_type " + resource.originalType());
        }
        Parsed<WeChatPayTransaction> transaction =
                json.read(plain.get(), WeChatPayTransaction.class, read -> Optional.empty());
        if (transaction instanceof Parsed.Invalid<WeChatPayTransaction> invalid) {
            return new Notice.Unreadable("the decrypted transaction: " + invalid.detail());
        }
        return ((Parsed.Valid<WeChatPayTransaction>) transaction).value().toNotice();
    }
}
