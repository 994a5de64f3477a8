package dev.idem.payments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class YuanTest {

    @ParameterizedTest
    @CsvSource({"19.99, 1999", "0.01, 1", "0.1, 10", "19.9, 1990", "100, 10000", "100.00, 10000",
            "1000000.00, 100000000", "999999999999.99, 99999999999999", "0.29, 29", "0.57, 57", "1.15, 115"})
    void yuanBecomeCentsExactly(String yuan, long cents) {
        assertEquals(OptionalLong.of(cents), Yuan.cents(yuan));
    }

    @ParameterizedTest
    @ValueSource(strings = {"19.990", "19.999", "-1.00", "+1.00", "1e3", "1.5E1", "", " 1.00", "1.00 ", "1.", ".5",
            "01.00", "1,00", "NaN", "Infinity", "0x10", "1000000000000.00", "19.99\n", "１９.９９"})
    void anythingButYuanWithTwoDecimalsIsRefused(String yuan) {
        assertTrue(Yuan.cents(yuan).isEmpty(), yuan);
    }

    @Test
    void noAmountIsRefused() {
        assertTrue(Yuan.cents(null).isEmpty());
    }
}
