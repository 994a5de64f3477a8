package dev.idem.payments;

import java.math.BigDecimal;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * The gateways write amounts as yuan in text with at most two decimals ({@code 19.99}: Alipay's
 * notifications and answers, both gateways' bills); idem keeps cents. Converted exactly, never
 * through a floating point: a third decimal, a sign, an exponent or anything else is refused
 * rather than rounded.
 */
public final class Yuan {

    /** Up to a trillion yuan: far above any order, far below a long's range in cents. */
    private static final Pattern YUAN = Pattern.compile("(0|[1-9][0-9]{0,11})(\\.[0-9]{1,2})?");

    private Yuan() {}

    public static OptionalLong cents(String yuan) {
        if (yuan == null || !YUAN.matcher(yuan).matches()) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(new BigDecimal(yuan).movePointRight(2).longValueExact());
    }
}
