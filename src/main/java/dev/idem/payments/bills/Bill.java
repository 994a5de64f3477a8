package dev.idem.payments.bills;

import dev.idem.orders.PaymentGateway;
import dev.idem.payments.PaymentCallback;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.List;

/**
 * One gateway's transaction bill for one day, as read from the file: its lines in the file's
 * order. Both gateways date their bills in China's time.
 */
public record Bill(PaymentGateway gateway, LocalDate date, List<Line> lines) {

    public static final ZoneId GATEWAY_TIME = ZoneId.of("Asia/Shanghai");

    public enum Kind {
        /** A payment the gateway took: applied as that gateway's notification of it would be. */
        PAYMENT,
        /** Money given back: listed, never applied. */
        REFUND,
        /** Anything else the bill lists (a revoked trade, say): counted, not acted on. */
        OTHER
    }

    /**
     * One line. {@code tradeNo}: the gateway's trade number; {@code amountCents}: the order's amount
     * as the gateway took it; {@code refundNo} and {@code refundCents} only on a refund;
     * {@code state}: the gateway's own word for the line.
     */
    public record Line(Kind kind, String orderId, String tradeNo, long amountCents, Instant at, String state,
                       String refundNo, long refundCents) {

        /** A payment line as the notification of the same payment would give it: same key, same fingerprint. */
        public PaymentCallback payment() {
            return new PaymentCallback(tradeNo, orderId, amountCents, PaymentCallback.SUCCESS, at);
        }
    }

    /** The instants the bill's day covers: from its start, up to the next day's. */
    public Instant from() {
        return date.atStartOfDay(GATEWAY_TIME).toInstant();
    }

    public Instant until() {
        return date.plusDays(1).atStartOfDay(GATEWAY_TIME).toInstant();
    }
}
