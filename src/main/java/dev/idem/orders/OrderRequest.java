package dev.idem.orders;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.Optional;
import java.util.regex.Pattern;

/** The body of {@code POST /api/orders}. Boxed so that a missing member is told from zero. */
@RegisterForReflection
public record OrderRequest(Long amountCents, String currency) {

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
        return Optional.empty();
    }
}
