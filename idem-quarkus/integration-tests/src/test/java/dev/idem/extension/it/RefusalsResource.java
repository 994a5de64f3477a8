package dev.idem.extension.it;

import dev.idem.pipeline.rest.Idempotent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * Debits that refuse the ways a service refuses: by throwing, by answering 503, and in a scope that
 * stores no refusals ({@code idem.pipeline.scopes.debit-afresh.store-refusals=false}). Each writes
 * its entry before it looks at the balance, so a refusal has something to roll back.
 */
@Path("/refusals")
@Produces(MediaType.APPLICATION_JSON)
public class RefusalsResource {

    private final Ledger ledger;

    RefusalsResource(Ledger ledger) {
        this.ledger = ledger;
    }

    /** A short balance thrown as a {@link WebApplicationException}: the same refusal as one returned. */
    @POST
    @Path("/thrown")
    @Idempotent(scope = "debit-thrown")
    public Uni<JsonObject> thrown(LedgerEntry entry, SqlConnection tx) {
        return ledger.enter(tx, entry.account(), entry.amount(), null).map(entered -> {
            if (entered.balance() < 0) {
                throw new WebApplicationException(Problems.problem(409, "INSUFFICIENT_FUNDS", "balance too short"));
            }
            return new JsonObject().put("balance", entered.balance());
        });
    }

    /** A short balance answered 503, as if another service were down: a failure, not the key's answer. */
    @POST
    @Path("/unavailable")
    @Idempotent(scope = "debit-unavailable")
    public Uni<Response> unavailable(LedgerEntry entry, SqlConnection tx) {
        return debit(entry, tx, Problems.problem(503, "LIMITS_UNAVAILABLE", "the limits service is away"));
    }

    /** A short balance refused in a scope that keeps no refusals: a retry runs again. */
    @POST
    @Path("/afresh")
    @Idempotent(scope = "debit-afresh")
    public Uni<Response> afresh(LedgerEntry entry, SqlConnection tx) {
        return debit(entry, tx, Problems.problem(409, "INSUFFICIENT_FUNDS", "balance too short"));
    }

    /** The entry, answered 200 with the balance, or {@code refusal} when the balance went below zero. */
    private Uni<Response> debit(LedgerEntry entry, SqlConnection tx, Response refusal) {
        return ledger.enter(tx, entry.account(), entry.amount(), null).map(entered -> entered.balance() < 0
                ? refusal
                : Response.ok(new JsonObject().put("balance", entered.balance()).encode()).build());
    }
}
