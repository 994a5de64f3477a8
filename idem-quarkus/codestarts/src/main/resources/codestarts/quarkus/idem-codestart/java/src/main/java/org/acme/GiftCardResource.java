package org.acme;

import dev.idem.pipeline.rest.Idempotent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import java.util.UUID;
import org.jboss.resteasy.reactive.ResponseStatus;
import org.jboss.resteasy.reactive.RestPath;

@Path("/api/gift-cards")
public class GiftCardResource {

    public record RedeemRequest(long amountCents) {
    }

    private final GiftCards cards;

    GiftCardResource(GiftCards cards) {
        this.cards = cards;
    }

    /** Once per Idempotency-Key (and X-User-Id): a retry gets the first answer again. */
    @POST
    @Path("/{cardId}/redemptions")
    @Idempotent(scope = "gift-card-redeem")
    @ResponseStatus(201)
    public Uni<GiftCards.Redemption> redeem(@RestPath UUID cardId, RedeemRequest request, SqlConnection tx) {
        return cards.redeem(cardId, request.amountCents(), tx);
    }
}
