package dev.idem.orders;

import static dev.idem.orders.OrderStateMachine.Miss.AMOUNT_MISMATCH;
import static dev.idem.orders.OrderStateMachine.Miss.DOUBLE_PAYMENT;
import static dev.idem.orders.OrderStateMachine.Miss.DUPLICATE;
import static dev.idem.orders.OrderStateMachine.Miss.ILLEGAL_TRANSITION;
import static dev.idem.orders.OrderStateMachine.Miss.PAID_AFTER_CLOSE;
import static dev.idem.orders.OrderStatus.CLOSED;
import static dev.idem.orders.OrderStatus.PAID;
import static dev.idem.orders.OrderStatus.WAIT_PAY;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class OrderStateMachineTest {

    @ParameterizedTest(name = "{0} -> {1}: {2}")
    @CsvSource({
        "WAIT_PAY, WAIT_PAY, false",
        "WAIT_PAY, PAID,     true",
        "WAIT_PAY, CLOSED,   true",
        "PAID,     WAIT_PAY, false",
        "PAID,     PAID,     false",
        "PAID,     CLOSED,   false",
        "CLOSED,   WAIT_PAY, false",
        "CLOSED,   PAID,     false",
        "CLOSED,   CLOSED,   false"
    })
    void onlyWaitPayMoves(OrderStatus from, OrderStatus to, boolean allowed) {
        assertEquals(allowed, OrderStateMachine.allowed(from, to));
    }

    @Test
    void conditionalUpdatesStartFromTheDeclaredSources() {
        assertEquals(Set.of(WAIT_PAY), OrderStateMachine.sourcesOf(PAID));
        assertEquals(Set.of(WAIT_PAY), OrderStateMachine.sourcesOf(CLOSED));
        assertEquals(EnumSet.noneOf(OrderStatus.class), OrderStateMachine.sourcesOf(WAIT_PAY));
    }

    static Order order(OrderStatus status, String tradeNo) {
        return new Order("o-1", "u-1", 1999, "CNY", status, tradeNo, Instant.EPOCH,
                status == PAID ? Instant.EPOCH : null, null);
    }

    @Test
    void aMissedPaymentIsADuplicateOnlyForTheSameTradeAndAmount() {
        assertEquals(DUPLICATE, OrderStateMachine.afterMiss(order(PAID, "T-1"), PAID, "T-1", 1999));
        assertEquals(DOUBLE_PAYMENT, OrderStateMachine.afterMiss(order(PAID, "T-1"), PAID, "T-2", 1999));
        assertEquals(AMOUNT_MISMATCH, OrderStateMachine.afterMiss(order(PAID, "T-1"), PAID, "T-1", 999));
        assertEquals(AMOUNT_MISMATCH, OrderStateMachine.afterMiss(order(WAIT_PAY, null), PAID, "T-1", 999));
        assertEquals(PAID_AFTER_CLOSE, OrderStateMachine.afterMiss(order(CLOSED, null), PAID, "T-1", 1999));
        // right amount, still unpaid, yet not moved: the trade number pays another order
        assertEquals(ILLEGAL_TRANSITION, OrderStateMachine.afterMiss(order(WAIT_PAY, null), PAID, "T-1", 1999));
    }

    @Test
    void aMissedCloseIsADuplicateOnlyWhenAlreadyClosed() {
        assertEquals(DUPLICATE, OrderStateMachine.afterMiss(order(CLOSED, null), CLOSED, "T-1", 1999));
        assertEquals(ILLEGAL_TRANSITION, OrderStateMachine.afterMiss(order(PAID, "T-1"), CLOSED, "T-1", 1999));
    }
}
