package dev.idem.pipeline;

import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Which {@link TwoPhaseWork} completes the records of each scope. Every such bean registers by
 * being a bean; two for one scope is a programming error and stops the service.
 */
@ApplicationScoped
public class TwoPhaseHandlers {

    private final Instance<TwoPhaseWork> all;
    private volatile Map<String, TwoPhaseWork> byScope;

    TwoPhaseHandlers(@Any Instance<TwoPhaseWork> all) {
        this.all = all;
    }

    /** Two handlers for one scope stop the start, not the first delivery. */
    void check(@Observes StartupEvent start) {
        handlers();
    }

    public Optional<TwoPhaseWork> forScope(String scope) {
        return Optional.ofNullable(handlers().get(scope));
    }

    /** Resolved on first use: a handler may itself depend on the pipeline that looks it up. */
    private Map<String, TwoPhaseWork> handlers() {
        Map<String, TwoPhaseWork> known = byScope;
        if (known == null) {
            Map<String, TwoPhaseWork> map = new HashMap<>();
            for (TwoPhaseWork work : all) {
                TwoPhaseWork previous = map.putIfAbsent(work.scope(), work);
                if (previous != null) {
                    throw new IllegalStateException("two two-phase handlers for scope " + work.scope() + ": "
                            + previous.getClass().getName() + " and " + work.getClass().getName());
                }
            }
            known = Map.copyOf(map);
            byScope = known;
        }
        return known;
    }
}
