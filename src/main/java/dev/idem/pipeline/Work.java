package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/** The business change a key guards; it runs on the pipeline's connection, inside its transaction. */
@FunctionalInterface
public interface Work {
    Uni<Effect> run(SqlConnection tx);
}
