package dev.idem.pipeline.deployment;

import dev.idem.pipeline.TwoPhaseScope;
import io.quarkus.test.QuarkusUnitTest;
import jakarta.enterprise.context.ApplicationScoped;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Two works for one scope: the pipeline could not tell which completes its records, so the build stops. */
class TwoWorksForOneScopeTest {

    @RegisterExtension
    static final QuarkusUnitTest BUILD = Builds.failingWith("Two-phase scope \"grant\" has 2 works, it must have one",
            FirstWork.class, SecondWork.class, NoWork.class);

    @Test
    void theBuildFails() {
        // the extension above asserts the failure; nothing runs
    }

    @ApplicationScoped
    @TwoPhaseScope("grant")
    static class FirstWork extends NoWork {}

    @ApplicationScoped
    @TwoPhaseScope("grant")
    static class SecondWork extends NoWork {}
}
