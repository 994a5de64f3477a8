package dev.idem.pipeline.deployment;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.TwoPhaseScope;
import dev.idem.pipeline.TwoPhaseWork;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Two works for one scope: the pipeline could not tell which completes its records, so the build stops. */
class TwoWorksForOneScopeTest {

    @RegisterExtension
    static final QuarkusUnitTest BUILD = Builds.failing(FirstWork.class, SecondWork.class)
            .assertException(failure -> assertTrue(Builds.messages(failure).contains(
                    "Two-phase scope \"grant\" has 2 works, it must have one"), Builds.messages(failure)));

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

    /** A work that is never run: only its declaration matters here. */
    abstract static class NoWork implements TwoPhaseWork {
        @Override
        public Uni<JsonObject> perform(String key, JsonObject payload) {
            return Uni.createFrom().item(new JsonObject());
        }

        @Override
        public Uni<Effect> confirm(SqlConnection tx, String key, JsonObject payload, JsonObject performed) {
            return Uni.createFrom().item(new Effect.Processed(new JsonObject()));
        }
    }
}
