package dev.idem.pipeline.deployment;

import io.quarkus.test.QuarkusUnitTest;
import jakarta.enterprise.context.ApplicationScoped;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A two-phase work that names no scope could never be found: the build says so. */
class WorkWithoutScopeTest {

    @RegisterExtension
    static final QuarkusUnitTest BUILD = Builds.failingWith("must name its scope with @TwoPhaseScope",
            Unnamed.class, NoWork.class);

    @Test
    void theBuildFails() {
        // the extension above asserts the failure; nothing runs
    }

    @ApplicationScoped
    static class Unnamed extends NoWork {}
}
