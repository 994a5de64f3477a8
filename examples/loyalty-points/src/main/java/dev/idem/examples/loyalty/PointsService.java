package dev.idem.examples.loyalty;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Outcome;
import dev.idem.pipeline.rest.ProblemAnswers;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.UUID;

/**
 * Awards and redemptions, each in the idempotency pipeline's transaction, together with the key's
 * record. The award table's own unique key (one award per award key) still holds should a key's
 * record be gone.
 */
@ApplicationScoped
public class PointsService {

    public static final String AWARD_SCOPE = "points-award";
    public static final String REDEMPTION_SCOPE = "points-redemption";

    /** The award row and the balance in one statement; no row back: the award was there already. */
    private static final String AWARD = """
            WITH awarded AS (
                INSERT INTO points_award (award_key, user_id, points) VALUES ($1, $2, $3)
                ON CONFLICT (award_key) DO NOTHING
                RETURNING user_id, points)
            INSERT INTO points_balance AS b (user_id, points)
            SELECT user_id, points FROM awarded
            ON CONFLICT (user_id) DO UPDATE SET points = b.points + EXCLUDED.points, updated_at = now()
            RETURNING b.points""";

    /**
     * The debit, only if the balance covers it, and the redemption with the balance it left. The
     * redemption is unique per (user, Idempotency-Key) as well: should the key's record be gone
     * (archived), a replay still cannot redeem twice.
     */
    private static final String REDEEM = """
            WITH debit AS (
                UPDATE points_balance SET points = points - $3, updated_at = now()
                WHERE user_id = $2 AND points >= $3
                RETURNING points)
            INSERT INTO points_redemption (redemption_id, user_id, points, idempotency_key, balance_after)
            SELECT $1, $2, $3, $4, points FROM debit
            RETURNING balance_after""";

    private final IdempotencyPipeline pipeline;
    private final Pool pool;

    PointsService(IdempotencyPipeline pipeline, Pool pool) {
        this.pipeline = pipeline;
        this.pool = pool;
    }

    public Uni<Outcome> award(PointsAward award) {
        return pipeline.execute(award.idemRequest(AWARD_SCOPE), tx -> tx.preparedQuery(AWARD)
                .execute(Tuple.of(award.awardKey(), award.userId(), award.points()))
                .map(rows -> rows.size() == 0
                        // the award's record was archived, its row was not
                        ? new Effect.Duplicate(new JsonObject().put("awardKey", award.awardKey()))
                        : new Effect.Processed(new JsonObject()
                                .put("awardKey", award.awardKey())
                                .put("userId", award.userId())
                                .put("points", award.points())
                                .put("balance", rows.iterator().next().getLong(0)))));
    }

    /**
     * Redeems {@code points} in the transaction {@code tx} of an {@code @Idempotent} request: 201
     * with the redemption, or 409 when the balance does not cover it (the extension keeps no
     * record of that answer, so the same key may succeed once points arrive).
     */
    public Uni<Response> redeem(SqlConnection tx, String userId, String idempotencyKey, int points) {
        UUID id = UUID.randomUUID();
        return tx.preparedQuery(REDEEM).execute(Tuple.of(id, userId, points, idempotencyKey)).map(rows -> rows.size() == 0
                ? ProblemAnswers.problem(409, "INSUFFICIENT_POINTS", "the balance of " + userId + " is less than " + points
                        + " points")
                : Response.status(201).type(MediaType.APPLICATION_JSON_TYPE).entity(new JsonObject()
                        .put("redemptionId", id.toString())
                        .put("userId", userId)
                        .put("points", points)
                        .put("balance", rows.iterator().next().getLong(0))
                        .encode()).build());
    }

    public Uni<Long> balance(String userId) {
        return pool.preparedQuery("SELECT points FROM points_balance WHERE user_id = $1").execute(Tuple.of(userId))
                .map(PointsService::firstLongOrZero);
    }

    private static long firstLongOrZero(RowSet<Row> rows) {
        return rows.size() == 0 ? 0 : rows.iterator().next().getLong(0);
    }
}
