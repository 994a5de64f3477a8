package dev.idem.extension.it;

import dev.idem.pipeline.rest.Idempotent;
import dev.idem.pipeline.rest.KnownAnswer;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;

@Path("/vouchers")
@Produces(MediaType.APPLICATION_JSON)
public class VoucherResource {

    private final Vouchers vouchers;

    VoucherResource(Vouchers vouchers) {
        this.vouchers = vouchers;
    }

    /**
     * Issues a voucher once per (caller, Idempotency-Key): a repeated request gets the first answer
     * again, status, headers and body, with {@code Idempotent-Replayed: true}. The answer is known
     * before the insert answers ({@link KnownAnswer}); the ledger's is not ({@link LedgerResource}).
     */
    @POST
    @Idempotent(scope = "voucher-issue")
    public Uni<Response> issue(VoucherIssue issue, SqlConnection tx) {
        String problem = issue == null ? "a JSON body is required" : issue.problem();
        if (problem != null) {
            return Uni.createFrom().item(Problems.problem(400, "BAD_REQUEST", problem));
        }
        // the answer is known before the insert answers: the key's record goes right behind it
        Voucher voucher = vouchers.voucher(issue);
        return KnownAnswer.after(tx, Response.created(URI.create("/vouchers/" + voucher.code())).entity(voucher).build(),
                vouchers.inserting(voucher));
    }
}
