package dev.idem.ops;

import io.quarkus.logging.LoggingFilter;
import java.util.Set;
import java.util.logging.Filter;
import java.util.logging.LogRecord;

/**
 * Drops the warnings a library logs about a setting idem makes on purpose, so that a warning in
 * the log still asks for attention. Applied to the console by {@code quarkus.log.console.filter}.
 *
 * <ul>
 *   <li>SRMSG18235, "Will not health check throttled commit strategy": the consumer channels set
 *       {@code throttled.unprocessed-record-max-age.ms=0}, because a record waits for as long as
 *       PostgreSQL is away and its age must not mark the channel dead. The connector warns once per
 *       consumer, eight times a start.
 * </ul>
 */
@LoggingFilter(name = "idem-deliberate-settings")
public final class DeliberateSettingsLogFilter implements Filter {

    static final Set<String> DELIBERATE = Set.of("SRMSG18235");

    @Override
    public boolean isLoggable(LogRecord record) {
        String message = record.getMessage();
        if (message == null) {
            return true;
        }
        int colon = message.indexOf(':');
        return colon < 0 || !DELIBERATE.contains(message.substring(0, colon));
    }
}
