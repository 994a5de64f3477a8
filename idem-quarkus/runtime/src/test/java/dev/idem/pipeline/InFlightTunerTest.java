package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.IntToLongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link InFlightTuner} against a simulated service: time advances by how long a delivery takes to
 * settle under the count the tuner allows, so the count it keeps is the one that measured faster.
 */
class InFlightTunerTest {

    private static final long WINDOW = 100_000_000L;

    /** The share of time spent at two in flight, once the tuner had 30 s to settle, over the next 30 s. */
    private static double timeAtTwo(InFlightTuner tuner, long[] now, IntToLongFunction nanosPerDelivery) {
        long warm = now[0] + 30_000_000_000L, end = warm + 30_000_000_000L, atTwo = 0;
        while (now[0] < end) {
            long step = nanosPerDelivery.applyAsLong(tuner.limit());
            if (now[0] >= warm && tuner.limit() == 2) {
                atTwo += step;
            }
            now[0] += step;
            tuner.settled(1);
        }
        return atTwo / 30e9;
    }

    @Test
    void keepsTwoInFlightWhereTwoSettleDeliveriesFaster() {
        long[] now = {0};
        InFlightTuner tuner = new InFlightTuner(1, 2, WINDOW, () -> now[0]);
        // a dear commit: a second transaction in flight overlaps the first's wait, 1.4 times the rate
        double share = timeAtTwo(tuner, now, limit -> limit == 2 ? 500_000 : 700_000);
        // all but the probes of one in flight: 3 windows of 16
        assertTrue(share > 0.75, "two in flight " + share + " of the time");
    }

    /** Two in flight slower (the busy cores), or faster by less than the margin: one is kept. */
    @ParameterizedTest
    @ValueSource(longs = {600_000, 490_000})
    void keepsOneInFlightWhereASecondIsNotFasterByTheMargin(long nanosAtTwo) {
        long[] now = {0};
        InFlightTuner tuner = new InFlightTuner(1, 2, WINDOW, () -> now[0]);
        double share = timeAtTwo(tuner, now, limit -> limit == 2 ? nanosAtTwo : 500_000);
        assertTrue(share < 0.25, "two in flight " + share + " of the time");
    }

    @Test
    void followsTheMachineWhenCommitsTurnDear() {
        long[] now = {0};
        InFlightTuner tuner = new InFlightTuner(1, 2, WINDOW, () -> now[0]);
        assertTrue(timeAtTwo(tuner, now, limit -> limit == 2 ? 600_000 : 500_000) < 0.25);
        assertTrue(timeAtTwo(tuner, now, limit -> limit == 2 ? 500_000 : 900_000) > 0.75);
    }

    @Test
    void aMostOfOneIsNeverExceeded() {
        long[] now = {0};
        InFlightTuner tuner = new InFlightTuner(1, 1, WINDOW, () -> now[0]);
        assertEquals(0.0, timeAtTwo(tuner, now, limit -> limit == 2 ? 1 : 1_000_000));
    }
}
