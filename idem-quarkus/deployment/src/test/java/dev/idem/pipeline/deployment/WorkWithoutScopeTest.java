package dev.idem.pipeline.deployment;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.TwoPhaseWork;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A two-phase work that names no scope could never be found: the build says so. */
class WorkWithoutScopeTest {

    @RegisterExtension
    static final QuarkusUnitTest BUILD = Builds.failing(Unnamed.class)
            .assertException(failure -> assertTrue(Builds.messages(failure).contains(
                    "must name its scope with @TwoPhaseScope"), Builds.messages(failure)));

    @Test
    void theBuildFails() {
        // the extension above asserts the failure; nothing runs
    }

    @ApplicationScoped
    static class Unnamed implements TwoPhaseWork {
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
