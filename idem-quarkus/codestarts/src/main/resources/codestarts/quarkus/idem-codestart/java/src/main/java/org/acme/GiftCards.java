package org.acme;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.rest.ProblemAnswers;
import io.quarkus.runtime.annotations.RegisterForReflection;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.WebApplicationException;
import java.util.UUID;

/** The business work, each statement through tx: the pipeline's transaction, which also records the key. */
@ApplicationScoped
public class GiftCards {

    @RegisterForReflection
    public record Redemption(UUID redemptionId, UUID cardId, long amountCents, long balanceCents) {
    }

    /** One card per bizKey; the table's unique key still holds for a copy older than the pipeline's retention. */
    public Uni<Effect> issue(CardIssue issue, SqlConnection tx) {
        return tx.preparedQuery("""
                        INSERT INTO gift_card (card_id, biz_key, user_id, balance_cents) VALUES ($1, $2, $3, $4)
                        ON CONFLICT (biz_key) DO NOTHING""")
                .execute(Tuple.of(UUID.randomUUID(), issue.bizKey(), issue.userId(), issue.amountCents()))
                .map(rows -> rows.rowCount() == 1 ? Effect.processed() : Effect.duplicate());
    }

    /**
     * A short balance (409) is the key's answer: the same request again is refused again, even
     * after a top-up, until a new key. An invalid amount (400) blames the request: nothing is kept.
     */
    public Uni<Redemption> redeem(UUID cardId, long amountCents, SqlConnection tx) {
        if (amountCents <= 0) {
            return Uni.createFrom().failure(problem(400, "AMOUNT_INVALID", "amountCents must be positive"));
        }
        return tx.preparedQuery("""
                        UPDATE gift_card SET balance_cents = balance_cents - $2
                        WHERE card_id = $1 AND balance_cents >= $2 RETURNING balance_cents""")
                .execute(Tuple.of(cardId, amountCents))
                .map(rows -> {
                    if (rows.rowCount() == 0) {
                        throw problem(409, "BALANCE_SHORT", "card " + cardId + " holds less than " + amountCents);
                    }
                    return new Redemption(UUID.randomUUID(), cardId, amountCents, rows.iterator().next().getLong(0));
                });
    }

    /** An application/problem+json answer (RFC 9457) with a code, as the extension's own refusals are. */
    static WebApplicationException problem(int status, String code, String detail) {
        return new WebApplicationException(ProblemAnswers.problem(status, code, detail));
    }
}
