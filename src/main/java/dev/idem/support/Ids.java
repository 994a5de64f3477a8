package dev.idem.support;

/**
 * Ids that come from outside — a trade number, an order id, a grant's business key — before they
 * become dedup keys and rows: not blank, not too long, and without control characters (Postgres
 * cannot store a NUL in text, and a line break would forge log lines) or half of a surrogate
 * pair (which no encoding keeps as it came).
 */
public final class Ids {

    private Ids() {}

    public static boolean valid(String id, int maxLength) {
        if (id == null || id.isBlank() || id.length() > maxLength) {
            return false;
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (Character.isISOControl(c)) {
                return false;
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 == id.length() || !Character.isLowSurrogate(id.charAt(i + 1))) {
                    return false;
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /** What {@link #valid} asks of {@code name}, as an answer or a dead-letter reason says it. */
    public static String rule(String name, int maxLength) {
        return name + " is required: 1 to " + maxLength + " characters, none of them a control character";
    }
}
