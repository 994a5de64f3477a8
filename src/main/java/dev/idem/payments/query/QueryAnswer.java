package dev.idem.payments.query;

import dev.idem.payments.PaymentCallback;

/**
 * What a gateway said when asked about one order, read and verified. Each is counted under its
 * {@link #result()}, the tag of {@code idem_gateway_queries_total}.
 */
public sealed interface QueryAnswer {

    String result();

    /** Paid: the payment, built as that gateway's notification builds it, for {@code PaymentService}. */
    record Paid(PaymentCallback callback) implements QueryAnswer {
        public String result() {
            return "paid";
        }
    }

    /** Not paid yet ({@code state}: the gateway's word for it); the order is asked again later. */
    record Unpaid(String state) implements QueryAnswer {
        public String result() {
            return "unpaid";
        }
    }

    /** Closed at the gateway: it will not be paid there. */
    record Closed(String state) implements QueryAnswer {
        public String result() {
            return "closed";
        }
    }

    /** The gateway knows no such order: no payment was ever started there. */
    record NotFound() implements QueryAnswer {
        public String result() {
            return "not_found";
        }
    }

    /**
     * No answer to act on: none came, or it did not verify or read. {@code retry}: asking again at
     * once may get one (no answer, 5xx, 429); otherwise the order waits for its next query.
     */
    record Failed(String reason, boolean retry) implements QueryAnswer {
        public String result() {
            return "error";
        }
    }
}
