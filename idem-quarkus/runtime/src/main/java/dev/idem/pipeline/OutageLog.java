package dev.idem.pipeline;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.jboss.logging.Logger;

/**
 * Says in the log that a dependency (Redis, the database, the dead-letter producer) is failing, and
 * that it is back: a WARN at its first failure, again at most once a minute while failures go on
 * (with how many there were), and an INFO at the first success after them, with how long it lasted
 * and how many failed. Counters say it too; a person reading the log should not have to look.
 * Cheap on the path of every call: a success while nothing is failing reads one volatile field.
 */
public final class OutageLog {

    private static final Duration QUIET = Duration.ofMinutes(1);

    private final Logger log;
    private final Clock clock;
    private final String dependency;
    private final String meanwhile;
    private final String failures;

    private volatile boolean failing;
    private Instant since;
    private Instant lastSaid;
    private long total;
    private long unsaid;

    /**
     * @param dependency what fails, as a sentence begins: "Redis"
     * @param meanwhile what the service does while it fails: "deliveries go on without it, the database decides"
     * @param failures what is counted, in the plural: "Redis calls skipped"
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
                lastSaid = null;
                total = 0;
                unsaid = 0;
            }
            total++;
            unsaid++;
            if (lastSaid != null && now.isBefore(lastSaid.plus(QUIET))) {
                return;
            }
            if (lastSaid == null) {
                log.warnf("%s is failing: %s; %s (said again at most once a minute while it lasts)", dependency, cause,
                        meanwhile);
            } else {
                log.warnf("%s is still failing: %d %s in the last %d s, %d since %s; the last: %s", dependency, unsaid,
                        failures, Duration.between(lastSaid, now).toSeconds(), total, since, cause);
            }
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
            log.infof("%s is back after %.1f s: %d %s meanwhile", dependency,
                    Duration.between(since, now).toMillis() / 1000.0, total, failures);
        }
    }

    /** Whether the dependency's last call failed. */
    public boolean failing() {
        return failing;
    }
}
