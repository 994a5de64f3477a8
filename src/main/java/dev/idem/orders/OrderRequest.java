package dev.idem.orders;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The body of {@code POST /api/orders}. Boxed so that a missing member is told from zero. The
 * gateway is optional: an order without one is asked of every gateway that is on.
 */
@RegisterForReflection
public record OrderRequest(Long amountCents, String currency, String gateway) {

    static final long MAX_AMOUNT_CENTS = 100_000_000L;
    private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");

    /** The first rule the body breaks, if any. */
    public Optional<String> violation() {
        if (amountCents == null) {
            return Optional.of("amountCents is required");
        }
        if (amountCents < 1 || amountCents > MAX_AMOUNT_CENTS) {
            return Optional.of("amountCents must be between 1 and " + MAX_AMOUNT_CENTS);
        }
        if (currency == null) {
            return Optional.of("currency is required");
        }
        if (!CURRENCY.matcher(currency).matches()) {
            return Optional.of("currency must be three capital letters");
        }
        if (gateway != null && PaymentGateway.named(gateway).isEmpty()) {
            return Optional.of("gateway must be wechatpay or alipay");
        }
        return Optional.empty();
    }

    /** The gateway the order names; empty when it names none. Call once {@link #violation()} is empty. */
    public Optional<PaymentGateway> paymentGateway() {
        return Optional.ofNullable(gateway).flatMap(PaymentGateway::named);
    }
}
