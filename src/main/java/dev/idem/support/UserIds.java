package dev.idem.support;

import java.util.regex.Pattern;

/**
 * The shape of a user id, wherever one arrives: the gateway's {@code X-User-Id} and a grant's
 * {@code userId}. The gateway is trusted with who the user is, not with how long or how odd the id
 * may be; these characters need no escaping in a URL path ({@code /api/users/{userId}/coupons}), a
 * log line or a dedup key.
 */
public final class UserIds {

    public static final int MAX_LENGTH = 128;

    /** The rule, as answers and dead-letter reasons state it. */
    public static final String RULE = "1 to " + MAX_LENGTH + " characters among ASCII letters, digits and - . _ ~ : @ + =";

    private static final Pattern SHAPE = Pattern.compile("[A-Za-z0-9._~:@+=-]{1," + MAX_LENGTH + "}");

    private UserIds() {}

    public static boolean valid(String userId) {
        return userId != null && SHAPE.matcher(userId).matches();
    }
}
