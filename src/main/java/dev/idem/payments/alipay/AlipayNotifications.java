package dev.idem.payments.alipay;

import dev.idem.payments.Notice;
import dev.idem.payments.PaymentCallback;
import dev.idem.payments.PaymentsConfig;
import dev.idem.payments.Rsa;
import dev.idem.payments.Yuan;
import dev.idem.pipeline.StrictJson.Parsed;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.security.PublicKey;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * Reads an Alipay asynchronous notification at the edge: the RSA2 signature and the app id first
 * (nothing unauthenticated is read further), then the trade. Built at start-up, so that a broken
 * configuration stops the service rather than the first notification.
 */
@Startup
@ApplicationScoped
public class AlipayNotifications {

    private static final ZoneId ALIPAY_TIME = ZoneId.of("Asia/Shanghai");
    private static final DateTimeFormatter GMT_FORMAT =
            DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss").withResolverStyle(ResolverStyle.STRICT);

    /** The application's id and Alipay's key; empty when the gateway is switched off. */
    record Keys(String appId, PublicKey alipayKey) {}

    private final Optional<Keys> keys;

    @Inject
    AlipayNotifications(PaymentsConfig config) {
        this(config.gateways().alipay());
    }

    AlipayNotifications(PaymentsConfig.Alipay config) {
        this.keys = keys(config);
    }

    private static Optional<Keys> keys(PaymentsConfig.Alipay config) {
        Optional<String> appId = config.appId().map(String::trim).filter(id -> !id.isEmpty());
        Optional<String> publicKey = config.publicKey().filter(key -> !key.isBlank());
        if (appId.isEmpty() && publicKey.isEmpty()) {
            return Optional.empty();
        }
        if (appId.isEmpty() || publicKey.isEmpty()) {
            throw new IllegalStateException("Alipay needs both idem.gateways.alipay.app-id and "
                    + "idem.gateways.alipay.public-key; set both, or neither to switch it off");
        }
        return Optional.of(new Keys(appId.get(), Rsa.publicKey("idem.gateways.alipay.public-key", publicKey.get())));
    }

    /** Off when its keys are not configured: its path answers 404. */
    public boolean enabled() {
        return keys.isPresent();
    }

    /** Alipay's key verifies the query's answers too, and the query asks as this application. */
    Optional<Keys> keys() {
        return keys;
    }

    public Notice read(byte[] body) {
        if (keys.isEmpty()) {
            return new Notice.Unauthentic("Alipay is not configured");
        }
        Parsed<AlipayForm> parsed = AlipayForm.parse(body);
        if (parsed instanceof Parsed.Invalid<AlipayForm> invalid) {
            return new Notice.Unreadable(invalid.detail());
        }
        AlipayForm form = ((Parsed.Valid<AlipayForm>) parsed).value();
        if (!"RSA2".equals(form.get(AlipayForm.SIGN_TYPE).orElse(null))) {
            return new Notice.Unauthentic("sign_type must be RSA2");
        }
        Optional<String> sign = form.get(AlipayForm.SIGN).filter(s -> !s.isEmpty());
        if (sign.isEmpty() || !Rsa.verifies(keys.get().alipayKey(), form.signedContent(), sign.get())) {
            return new Notice.Unauthentic("sign does not verify");
        }
        if (!keys.get().appId().equals(form.get("app_id").orElse(null))) {
            return new Notice.Unauthentic("app_id is not this application's");
        }
        return trade(form::get);
    }

    /**
     * A trade by its members' names in a notification ({@code trade_status}, {@code out_trade_no},
     * {@code trade_no}, {@code total_amount}, {@code gmt_payment}): TRADE_SUCCESS and TRADE_FINISHED
     * pay, TRADE_CLOSED closes, WAIT_BUYER_PAY changes nothing. The query's answer is read here too,
     * so that it builds the very payment the notification would.
     */
    static Notice trade(Function<String, Optional<String>> form) {
        String tradeStatus = form.apply("trade_status").orElse("");
        String status;
        switch (tradeStatus) {
            case "TRADE_SUCCESS", "TRADE_FINISHED" -> status = PaymentCallback.SUCCESS;
            case "TRADE_CLOSED" -> status = PaymentCallback.CLOSED;
            case "WAIT_BUYER_PAY" -> {
                return new Notice.Ignored("trade_status WAIT_BUYER_PAY");
            }
            default -> {
                return new Notice.Unreadable("trade_status must be TRADE_SUCCESS, TRADE_FINISHED, TRADE_CLOSED "
                        + "or WAIT_BUYER_PAY");
            }
        }
        Optional<String> outTradeNo = form.apply("out_trade_no").filter(s -> !s.isBlank());
        Optional<String> tradeNo = form.apply("trade_no").filter(s -> !s.isBlank());
        if (outTradeNo.isEmpty() || tradeNo.isEmpty()) {
            return new Notice.Unreadable("out_trade_no and trade_no are required");
        }
        OptionalLong cents = Yuan.cents(form.apply("total_amount").orElse(null));
        if (cents.isEmpty()) {
            return new Notice.Unreadable("total_amount must be yuan with at most two decimals, e.g. 19.99");
        }
        Instant paidAt = null;
        Optional<String> gmtPayment = form.apply("gmt_payment").filter(s -> !s.isEmpty());
        if (gmtPayment.isPresent()) {
            try {
                paidAt = LocalDateTime.parse(gmtPayment.get(), GMT_FORMAT).atZone(ALIPAY_TIME).toInstant();
            } catch (DateTimeParseException notAlipayTime) {
                return new Notice.Unreadable("gmt_payment must be yyyy-MM-dd HH:mm:ss");
            }
        }
        PaymentCallback callback =
                new PaymentCallback(tradeNo.get(), outTradeNo.get(), cents.getAsLong(), status, paidAt);
        return callback.violation().<Notice>map(Notice.Unreadable::new).orElseGet(() -> new Notice.Payment(callback));
    }
}
