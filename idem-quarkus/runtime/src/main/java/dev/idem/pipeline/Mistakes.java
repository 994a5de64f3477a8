package dev.idem.pipeline;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Mistakes in a service's works that no outcome shows (a work that writes outside its transaction,
 * one that holds the transaction for long): each is counted in
 * {@code idem_pipeline_mistakes_total{scope,kind}} every time and logged at WARN once a minute per
 * scope and kind, so that the log names the mistake without repeating it for every delivery.
 */
final class Mistakes {

    private static final Logger LOG = Logger.getLogger(Mistakes.class);
    private static final Duration QUIET = Duration.ofMinutes(1);

    private final Clock clock;
    private final PipelineMetrics metrics;
    private final Map<String, Instant> lastLogged = new ConcurrentHashMap<>();

    Mistakes(Clock clock, PipelineMetrics metrics) {
        this.clock = clock;
        this.metrics = metrics;
    }

    void warn(String scope, String kind, String format, Object... params) {
        metrics.mistake(scope, kind);
        Instant now = clock.instant();
        Instant last = lastLogged.get(scope + ' ' + kind);
        if (last == null || !now.isBefore(last.plus(QUIET))) {
            lastLogged.put(scope + ' ' + kind, now);
            LOG.warnf(format, params);
        }
    }
}
