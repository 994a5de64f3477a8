package dev.idem.examples.loyalty;

import java.util.regex.Pattern;

/** The shape of a user id, from a header, a path or a record: safe in a URL path, a log line and a key. */
final class UserIds {

    static final String RULE = "1 to 128 characters among ASCII letters, digits and - . _ ~ : @ + =";

    private static final Pattern SHAPE = Pattern.compile("[A-Za-z0-9._~:@+=-]{1,128}");

    private UserIds() {}

    static boolean valid(String userId) {
        return userId != null && SHAPE.matcher(userId).matches();
    }
}
