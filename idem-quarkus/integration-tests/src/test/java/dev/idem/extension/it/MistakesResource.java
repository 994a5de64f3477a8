package dev.idem.extension.it;

import dev.idem.pipeline.rest.Idempotent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/** Endpoints with the mistakes a newcomer makes, to see what the extension makes of each. */
@Path("/mistakes")
@Produces(MediaType.APPLICATION_JSON)
public class MistakesResource {

    private final Ledger ledger;
    private final Pool pool;
    private final Bug bug;

    MistakesResource(Ledger ledger, Pool pool, Bug bug) {
        this.ledger = ledger;
        this.pool = pool;
        this.bug = bug;
    }

    /** Enters the amount, then throws while the bug is present. */
    @POST
    @Path("/throwing")
    @Idempotent(scope = "mistake-throwing")
    public Uni<Response> throwing(LedgerEntry entry, SqlConnection tx) {
        return ledger.enter(tx, entry.account(), entry.amount(), null).map(entered -> {
            bug.strike("the throwing work");
            return Response.status(201).entity(new JsonObject().put("id", entered.id()).encode()).build();
        });
    }

    /** Writes through the injected pool, not through tx: outside the transaction that records the key. */
    @POST
    @Path("/pool-writer")
    @Idempotent(scope = "mistake-pool-writer")
    public Uni<Response> poolWriter(LedgerEntry entry, SqlConnection tx) {
        return pool.preparedQuery("INSERT INTO ledger (account, amount) VALUES ($1, $2)")
                .execute(Tuple.of(entry.account(), entry.amount()))
                .replaceWith(Response.status(201).entity(new JsonObject().put("account", entry.account()).encode()).build());
    }
}
