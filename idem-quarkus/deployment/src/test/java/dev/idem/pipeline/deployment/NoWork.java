package dev.idem.pipeline.deployment;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.TwoPhaseWork;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * A two-phase work that is never run: only its declaration matters to a build. An application
 * that extends it lists it among its classes.
 */
abstract class NoWork implements TwoPhaseWork {

    @Override
    public Uni<JsonObject> perform(String key, JsonObject payload) {
        return Uni.createFrom().item(new JsonObject());
    }

    @Override
    public Uni<Effect> confirm(SqlConnection tx, String key, JsonObject payload, JsonObject performed) {
        return Uni.createFrom().item(new Effect.Processed(new JsonObject()));
    }
}
