package dev.idem.extension.it;

import dev.idem.pipeline.rest.Idempotent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

@Path("/ledger")
@Produces(MediaType.APPLICATION_JSON)
public class LedgerResource {

    private final Ledger ledger;

    LedgerResource(Ledger ledger) {
        this.ledger = ledger;
    }

    /**
     * Enters an amount once per (caller, Idempotency-Key). The entry is written first and the
     * balance checked after: a debit it would take below zero is answered 409, the extension rolls
     * the entry back, and that 409 is the key's answer to every retry, even after a top-up.
     */
    @POST
    @Idempotent(scope = "ledger-entry")
    public Uni<Response> enter(LedgerEntry entry, SqlConnection tx) {
        if (entry == null || entry.account() == null || entry.account().isBlank() || entry.amount() == null) {
            return Uni.createFrom().item(Problems.problem(400, "BAD_REQUEST", "account and amount are required"));
        }
        return ledger.enter(tx, entry.account(), entry.amount(), null).map(entered -> entered.balance() < 0
                ? Problems.problem(409, "INSUFFICIENT_FUNDS", "the balance of " + entry.account() + " would be "
                        + entered.balance())
                : Response.status(201).entity(new JsonObject()
                        .put("id", entered.id())
                        .put("account", entry.account())
                        .put("amount", entry.amount())
                        .put("balance", entered.balance())
                        .encode()).build());
    }
}
