package dev.idem.ops;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

class DeliberateSettingsLogFilterTest {

    final DeliberateSettingsLogFilter filter = new DeliberateSettingsLogFilter();

    @Test
    void theWarningAboutTheUncheckedRecordAgeIsDropped() {
        assertFalse(filter.isLoggable(warning(
                "SRMSG18235: Will not health check throttled commit strategy for group '%s'.")));
    }

    @Test
    void everyOtherMessageIsKept() {
        assertTrue(filter.isLoggable(warning("SRMSG18252: Failed to commit %s")));
        assertTrue(filter.isLoggable(warning("Pool closed")));
        assertTrue(filter.isLoggable(warning("order SRMSG18235: mentioned later")));
        assertTrue(filter.isLoggable(warning(null)));
    }

    static LogRecord warning(String message) {
        return new LogRecord(Level.WARNING, message);
    }
}
