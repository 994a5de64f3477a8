package dev.idem.pipeline;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.jboss.logging.Logger;

/**
 * Says in the log that a dependency (Redis, the database, the dead-letter producer) is failing, and
 * that it is back: a WARN once its failures last (failures without a success for a second), again
 * at most once a minute while they go on (with how many there were), and an INFO at the first
 * success after an outage the log told of, with how long it lasted. A blip (a burst of requests that
 * all time out on a cold connection, say) is only counted, in the metrics and in the next WARN; a
 * dependency that comes and goes is still said at most once a minute. Cheap on the path of every
 * call: a success while nothing is failing reads one volatile field.
 */
public final class OutageLog {

    private static final Duration QUIET = Duration.ofMinutes(1);
    /** Failures for this long without a success make an outage rather than a blip. */
    private static final Duration SUSTAINED = Duration.ofSeconds(1);

    private final Logger log;
    private final Clock clock;
    private final String dependency;
    private final String meanwhile;
    private final String failures;

    private volatile boolean failing;
    private Instant since;
    /** Failures of the current outage, and whether the log told of it. */
    private long inRow;
    private boolean said;
    /** The last WARN, across outages, and the failures since it. */
    private Instant lastSaid;
    private long unsaid;

    /**
     * @param dependency what fails, as a sentence begins: "Redis"
     * @param meanwhile what the service does while it fails: "deliveries go on without it, the database decides"
     * @param failures what is counted, in the plural: "calls skipped"
     */
    public OutageLog(Logger log, Clock clock, String dependency, String meanwhile, String failures) {
        this.log = log;
        this.clock = clock;
        this.dependency = dependency;
        this.meanwhile = meanwhile;
        this.failures = failures;
    }

    /** One more failure of the dependency, {@code cause} saying how (never a secret: an exception's text). */
    public void failed(Object cause) {
        Instant now = clock.instant();
        synchronized (this) {
            if (!failing) {
                failing = true;
                since = now;
                inRow = 0;
                said = false;
            }
            inRow++;
            unsaid++;
            if (now.isBefore(since.plus(SUSTAINED)) || lastSaid != null && now.isBefore(lastSaid.plus(QUIET))) {
                return;
            }
            if (!said) {
                log.warnf("%s is failing: %s; %s (%d %s since %s; said again at most once a minute while it lasts)",
                        dependency, cause, meanwhile, unsaid, failures, lastSaid == null ? "start-up" : "the last line");
            } else {
                log.warnf("%s is still failing: %d %s in the last %d s, %d since %s; the last: %s", dependency, unsaid,
                        failures, Duration.between(lastSaid, now).toSeconds(), inRow, since, cause);
            }
            said = true;
            lastSaid = now;
            unsaid = 0;
        }
    }

    /** A call to the dependency succeeded: if it was failing, it is back. */
    public void ok() {
        if (!failing) {
            return;
        }
        Instant now = clock.instant();
        synchronized (this) {
            if (!failing) {
                return;
            }
            failing = false;
            if (said) {
                log.infof("%s is back after %.1f s: %d %s meanwhile", dependency,
                        Duration.between(since, now).toMillis() / 1000.0, inRow, failures);
            }
        }
    }
}
