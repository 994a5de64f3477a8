package dev.idem.orders;

import static dev.idem.orders.OrderStatus.CLOSED;
import static dev.idem.orders.OrderStatus.PAID;
import static dev.idem.orders.OrderStatus.WAIT_PAY;

import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The one place where order transitions are declared. A state changes only by a conditional
 * update from a state this table allows; when that update finds no row, {@link #afterMiss} tells
 * an idempotent duplicate from an anomaly, and never confuses the two.
 */
public final class OrderStateMachine {

    private static final Map<OrderStatus, Set<OrderStatus>> ALLOWED = Map.of(
            WAIT_PAY, EnumSet.of(PAID, CLOSED),
            PAID, EnumSet.noneOf(OrderStatus.class),
            CLOSED, EnumSet.noneOf(OrderStatus.class));

    /** What a payment event that could not move the order (its update missed) means. */
    public enum Miss {
        /** The order is already where the event would move it, for the same cause. */
        DUPLICATE,
        AMOUNT_MISMATCH,
        /** A second trade number for a paid order. */
        DOUBLE_PAYMENT,
        PAID_AFTER_CLOSE,
        ILLEGAL_TRANSITION
    }

    private OrderStateMachine() {}

    public static boolean allowed(OrderStatus from, OrderStatus to) {
        return ALLOWED.get(from).contains(to);
    }

    /** The states from which {@code target} may be reached: the WHERE clause of the update. */
    public static Set<OrderStatus> sourcesOf(OrderStatus target) {
        Set<OrderStatus> sources = EnumSet.noneOf(OrderStatus.class);
        ALLOWED.forEach((from, targets) -> {
            if (targets.contains(target)) {
                sources.add(from);
            }
        });
        return sources;
    }

    /**
     * Classifies an event that asked for {@code target} but whose conditional update changed no
     * row, given the order as it is now.
     *
     * @param tradeNo     the trade number the event carries
     * @param amountCents the amount the event carries
     */
    public static Miss afterMiss(Order current, OrderStatus target, String tradeNo, long amountCents) {
        if (target == PAID) {
            if (current.amountCents() != amountCents) {
                return Miss.AMOUNT_MISMATCH;
            }
            if (current.status() == PAID) {
                return Objects.equals(current.tradeNo(), tradeNo) ? Miss.DUPLICATE : Miss.DOUBLE_PAYMENT;
            }
            if (current.status() == CLOSED) {
                return Miss.PAID_AFTER_CLOSE;
            }
            // WAIT_PAY with the right amount: the trade number already pays another order
            return Miss.ILLEGAL_TRANSITION;
        }
        return current.status() == target ? Miss.DUPLICATE : Miss.ILLEGAL_TRANSITION;
    }
}
