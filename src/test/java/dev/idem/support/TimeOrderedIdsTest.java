package dev.idem.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class TimeOrderedIdsTest {

    private static Clock at(String instant) {
        return Clock.fixed(Instant.parse(instant), ZoneOffset.UTC);
    }

    @Test
    void anIdIsAVersionSevenUuidCarryingItsMillisecond() {
        Instant now = Instant.parse("2026-12-06T23:30:00.123Z");
        UUID id = UUID.fromString(TimeOrderedIds.next(Clock.fixed(now, ZoneOffset.UTC)));
        assertEquals(7, id.version());
        assertEquals(2, id.variant());
        assertEquals(now.toEpochMilli(), id.getMostSignificantBits() >>> 16);
    }

    @Test
    void aLaterMillisecondSortsAfterAsTextToo() {
        String earlier = TimeOrderedIds.next(at("2026-12-06T23:30:00.123Z"));
        String later = TimeOrderedIds.next(at("2026-12-06T23:30:00.124Z"));
        // a B-tree of text ids takes the next id at its right edge
        assertTrue(earlier.compareTo(later) < 0, earlier + " then " + later);
    }

    @Test
    void idsOfTheSameMillisecondDiffer() {
        Clock clock = at("2026-12-06T23:30:00.123Z");
        assertNotEquals(TimeOrderedIds.next(clock), TimeOrderedIds.next(clock));
    }
}
