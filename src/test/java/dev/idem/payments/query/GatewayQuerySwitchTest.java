package dev.idem.payments.query;

import dev.idem.payments.PaymentsConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.orders.PaymentGateway;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class GatewayQuerySwitchTest {

    static PaymentsConfig.Query query(Optional<Boolean> enabled, int rate) {
        return new PaymentsConfig.Query() {
            public Optional<Boolean> enabled() {
                return enabled;
            }

            public Duration firstDelay() {
                return Duration.ofMinutes(5);
            }

            public Duration maxInterval() {
                return Duration.ofMinutes(30);
            }

            public int rate() {
                return rate;
            }
        };
    }

    static boolean on(Optional<Boolean> enabled, int rate, boolean gatewayOn, boolean keysSet) {
        return new GatewayQuery(PaymentGateway.WECHATPAY, query(enabled, rate), "idem.gateways.wechatpay", gatewayOn,
                keysSet, "idem.gateways.wechatpay.mchid") {
            public Uni<QueryAnswer> ask(String orderId) {
                return Uni.createFrom().nullItem();
            }
        }.enabled();
    }

    @Test
    void onByDefaultWhenTheGatewayAndItsRequestKeysAreAndOffWhenSaid() {
        assertEquals(true, on(Optional.empty(), 20, true, true));
        assertEquals(false, on(Optional.empty(), 20, true, false));
        assertEquals(false, on(Optional.empty(), 20, false, true));
        assertEquals(false, on(Optional.of(false), 20, true, true));
        assertEquals(true, on(Optional.of(true), 20, true, true));
    }

    @Test
    void onWhereItCannotWorkStopsTheStart() {
        assertTrue(assertThrows(IllegalStateException.class, () -> on(Optional.of(true), 20, false, true))
                .getMessage().contains("needs the gateway on"));
        assertTrue(assertThrows(IllegalStateException.class, () -> on(Optional.of(true), 20, true, false))
                .getMessage().contains("idem.gateways.wechatpay.mchid"));
        assertThrows(IllegalStateException.class, () -> on(Optional.empty(), 0, true, true));
        assertEquals(false, on(Optional.empty(), 0, true, false), "a rate is checked only where queries are made");
    }
}
