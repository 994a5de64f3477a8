package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * Work whose effect lies outside the database, for the pipeline's two-phase mode. A bean per scope,
 * named by {@link TwoPhaseScope}: the pipeline finds it both for a first delivery and for recovery,
 * which re-runs a hanging record's effect from its stored payload, possibly in another process,
 * possibly long after the delivery that claimed it.
 */
public interface TwoPhaseWork {

    /**
     * Runs the external effect, outside any transaction. It carries {@code key} so that the other
     * side deduplicates: it may run more than once for one key (a takeover after a crash or a
     * timeout) and must then have one effect. A failed Uni is a failed attempt.
     *
     * @return what the other side answered, handed to {@link #confirm}
     */
    Uni<JsonObject> perform(String key, JsonObject payload);

    /**
     * The local business change that goes with the confirmation, on the pipeline's connection and
     * in the transaction that marks the record DONE. {@link Effect.Rejected} counts as a failed
     * attempt.
     */
    Uni<Effect> confirm(SqlConnection tx, String key, JsonObject payload, JsonObject performed);
}
