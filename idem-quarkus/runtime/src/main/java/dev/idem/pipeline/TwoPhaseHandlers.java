package dev.idem.pipeline;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Which {@link TwoPhaseWork} completes the records of each scope, by its {@link TwoPhaseScope}.
 * The build has checked that no scope has two; looked up on first use, since a work may itself
 * depend on the pipeline that looks it up.
 */
@ApplicationScoped
class TwoPhaseHandlers {

    private final Function<String, Optional<TwoPhaseWork>> lookup;
    private final Map<String, Optional<TwoPhaseWork>> byScope = new ConcurrentHashMap<>();

    @Inject
    TwoPhaseHandlers(@Any Instance<TwoPhaseWork> all) {
        this(scope -> {
            Instance<TwoPhaseWork> work = all.select(new TwoPhaseScope.Literal(scope));
            return work.isResolvable() ? Optional.of(work.get()) : Optional.empty();
        });
    }

    /** The works as {@code lookup} finds them (the unit tests' own). */
    TwoPhaseHandlers(Function<String, Optional<TwoPhaseWork>> lookup) {
        this.lookup = lookup;
    }

    Optional<TwoPhaseWork> forScope(String scope) {
        return byScope.computeIfAbsent(scope, lookup);
    }
}
