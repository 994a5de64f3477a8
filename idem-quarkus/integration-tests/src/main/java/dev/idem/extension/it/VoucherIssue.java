package dev.idem.extension.it;

/** A voucher to issue, from a request body or a {@code voucher-grants} record: its code is issued once. */
public record VoucherIssue(String code, String holder, Integer amount) {

    /** What is wrong with it, or null. */
    String problem() {
        if (code == null || code.isBlank() || code.length() > 255) {
            return "code is required (at most 255 characters)";
        }
        if (holder == null || holder.isBlank()) {
            return "holder is required";
        }
        return amount == null || amount < 1 ? "amount is required: a whole number of at least 1" : null;
    }
}
