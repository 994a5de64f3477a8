package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.jboss.logging.Logger;
import org.junit.jupiter.api.Test;

/** What the log says of an outage: once when it starts, once a minute while it lasts, once when it ends. */
class OutageLogTest {

    /** The lines logged, as "LEVEL text". */
    private final List<String> lines = new ArrayList<>();
    private Instant now = Instant.parse("2026-12-05T10:00:00Z");

    private final Logger log = new Logger("outage-test") {
        @Override
        protected void doLog(Level level, String loggerClassName, Object message, Object[] parameters, Throwable thrown) {
            lines.add(level + " " + message);
        }

        @Override
        protected void doLogf(Level level, String loggerClassName, String format, Object[] parameters, Throwable thrown) {
            lines.add(level + " " + String.format(format, parameters));
        }

        @Override
        public boolean isEnabled(Level level) {
            return true;
        }
    };

    private final Clock clock = new Clock() {
        public ZoneId getZone() { return ZoneOffset.UTC; }
        public Clock withZone(ZoneId zone) { return this; }
        public Instant instant() { return now; }
    };

    private final OutageLog outage = new OutageLog(log, clock, "Redis", "the database decides", "calls skipped");

    @Test
    void aStormOfFailuresIsOneLineAMinuteWithItsCountAndTheEndOneLine() {
        outage.ok();
        assertEquals(List.of(), lines, "nothing to say while all is well");

        for (int i = 0; i < 500; i++) {
            outage.failed("connection refused");
            now = now.plusMillis(100);
        }
        // 50 s of failures: said once they had gone on for a second, the rest not yet
        assertEquals(1, lines.size(), lines.toString());
        assertTrue(lines.get(0).startsWith("WARN Redis is failing: connection refused; the database decides (11 calls"
                + " skipped since start-up;"), lines.get(0));

        now = now.plusSeconds(11);
        outage.failed("connection refused");
        assertEquals(2, lines.size(), lines.toString());
        assertTrue(lines.get(1).startsWith("WARN Redis is still failing: 490 calls skipped in the last 60 s, 501 since"),
                lines.get(1));

        now = now.plus(Duration.ofSeconds(29));
        outage.ok();
        outage.ok();
        assertEquals(List.of("INFO Redis is back after 90.0 s: 501 calls skipped meanwhile"), lines.subList(2, lines.size()));
    }

    @Test
    void aBlipIsCountedNotSaid() {
        for (int blip = 0; blip < 3; blip++) {
            // a burst of requests on a cold connection, all past the budget at once
            outage.failed("timeout after 100 ms");
            outage.failed("timeout after 100 ms");
            now = now.plusMillis(300);
            outage.ok();
        }
        assertEquals(List.of(), lines);

        // a slow trickle of failures without a success is an outage after a second
        outage.failed("connection refused");
        now = now.plusSeconds(2);
        outage.failed("connection refused");
        assertEquals(1, lines.size(), lines.toString());
        assertTrue(lines.get(0).startsWith("WARN Redis is failing: connection refused; the database decides (8 calls"),
                lines.get(0));
    }

    @Test
    void aDependencyThatComesAndGoesIsSaidAtMostOnceAMinute() {
        for (int flap = 0; flap < 6; flap++) {
            for (int i = 0; i < 5; i++) {
                outage.failed("connection refused");
                now = now.plusMillis(300);
            }
            now = now.plusSeconds(5);
            outage.ok();
        }
        // the first outage said and its end; the next five, within the minute, counted for the next line
        assertEquals(2, lines.size(), lines.toString());
        now = now.plusSeconds(40);
        for (int i = 0; i < 5; i++) {
            outage.failed("connection refused");
            now = now.plusMillis(300);
        }
        assertEquals(3, lines.size(), lines.toString());
        assertTrue(lines.get(2).contains("(30 calls skipped since the last line;"), lines.get(2));
    }
}
