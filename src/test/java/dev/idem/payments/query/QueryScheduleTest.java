package dev.idem.payments.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class QueryScheduleTest {

    static final Instant MADE = Instant.parse("2026-12-01T10:00:00Z");
    static final Duration FIRST = Duration.ofMinutes(5);
    static final Duration MAX = Duration.ofMinutes(30);
    static final Duration EXPIRY = Duration.ofHours(2);

    /** The defaults without jitter: asked at 5, 10, 20, 40, 70 and 100 minutes, then the order expires. */
    @Test
    void theWaitDoublesFromTheFirstDelayUpToTheMaximumUntilTheOrderExpires() {
        List<Long> minutes = new ArrayList<>();
        Instant at = MADE.plus(FIRST);
        int queries = 0;
        while (true) {
            minutes.add(Duration.between(MADE, at).toMinutes());
            queries++;
            Optional<Instant> next = QuerySchedule.next(MADE, at, queries, FIRST, MAX, EXPIRY, 0.0);
            if (next.isEmpty()) {
                break;
            }
            at = next.get();
        }
        assertEquals(List.of(5L, 10L, 20L, 40L, 70L, 100L), minutes);
    }

    @Test
    void jitterTakesUpToAQuarterOffTheWait() {
        Instant now = MADE.plus(FIRST);
        Instant longest = QuerySchedule.next(MADE, now, 1, FIRST, MAX, EXPIRY, 0.0).orElseThrow();
        Instant shortest = QuerySchedule.next(MADE, now, 1, FIRST, MAX, EXPIRY, 0.999999).orElseThrow();
        assertEquals(now.plus(FIRST), longest);
        assertTrue(Duration.between(now, shortest).toMillis() > FIRST.toMillis() * 3 / 4 - 1, shortest.toString());
        assertTrue(shortest.isBefore(longest));
    }

    @Test
    void nothingIsDueOnceTheOrderExpiredAndManyQueriesDoNotOverflow() {
        assertEquals(Optional.empty(), QuerySchedule.next(MADE, MADE.plus(EXPIRY), 1, FIRST, MAX, EXPIRY, 0.5));
        assertEquals(Optional.of(MADE.plus(MAX)), QuerySchedule.next(MADE, MADE, 500, FIRST, MAX, EXPIRY, 0.0));
    }

    @Test
    void aPaceSpacesRequestsByTheRate() {
        QueryPace pace = new QueryPace(20);
        long start = 1_000_000_000L;
        assertEquals(0, pace.waitNanos(start));
        assertEquals(50_000_000L, pace.waitNanos(start));
        assertEquals(90_000_000L, pace.waitNanos(start + 10_000_000L));
        // a quiet second later the next request goes at once
        assertEquals(0, pace.waitNanos(start + 2_000_000_000L));
    }
}
