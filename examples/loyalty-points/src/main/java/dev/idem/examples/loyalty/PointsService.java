package dev.idem.examples.loyalty;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.IdemRequest;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Outcome;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * Awards and redemptions, each through the idempotency pipeline: the business rows are written in
 * the pipeline's transaction, together with the key's record. The tables' own unique keys (one
 * award per award key, one redemption per user and Idempotency-Key) still hold should a key's
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

    /** Claims (user, key) first, so that a concurrent copy of the request waits on the key, not the balance. */
    private static final String CLAIM = """
            INSERT INTO points_redemption (redemption_id, user_id, idempotency_key, points) VALUES ($1, $2, $3, $4)
            ON CONFLICT (user_id, idempotency_key) DO NOTHING
            RETURNING redemption_id""";

    /** The debit, only if the balance covers it; the redemption keeps the balance it left. */
    private static final String DEBIT = """
            WITH debit AS (
                UPDATE points_balance SET points = points - $2, updated_at = now()
                WHERE user_id = $1 AND points >= $2
                RETURNING points)
            UPDATE points_redemption r SET balance_after = debit.points FROM debit
            WHERE r.redemption_id = $3
            RETURNING r.balance_after""";

    private static final String UNCLAIM = "DELETE FROM points_redemption WHERE redemption_id = $1";

    private static final String EARLIER = """
            SELECT redemption_id, points, balance_after FROM points_redemption
            WHERE user_id = $1 AND idempotency_key = $2""";

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
                        ? new Effect.AlreadyApplied(new JsonObject().put("awardKey", award.awardKey()))
                        : new Effect.Applied(new JsonObject()
                                .put("awardKey", award.awardKey())
                                .put("userId", award.userId())
                                .put("points", award.points())
                                .put("balance", rows.iterator().next().getLong(0)))));
    }

    /**
     * Redeems once per (user, Idempotency-Key). The stored result is the whole answer (status and
     * body), so a replay answers what the first request answered. A balance that does not cover it
     * is refused and keeps no record: the same key may succeed once points arrive.
     */
    public Uni<Outcome> redeem(String userId, String idempotencyKey, RedemptionRequest request) {
        IdemRequest idem = new IdemRequest(REDEMPTION_SCOPE, keyOf(userId, idempotencyKey),
                IdemRequest.fingerprint(request.points()));
        return pipeline.execute(idem, tx -> redeem(tx, userId, idempotencyKey, request.points()));
    }

    private Uni<Effect> redeem(SqlConnection tx, String userId, String idempotencyKey, int points) {
        UUID id = UUID.randomUUID();
        return tx.preparedQuery(CLAIM).execute(Tuple.of(id, userId, idempotencyKey, points)).chain(claimed -> {
            if (claimed.size() == 0) {
                return earlier(tx, userId, idempotencyKey, points);
            }
            return tx.preparedQuery(DEBIT).execute(Tuple.of(userId, points, id)).chain(debited -> debited.size() == 1
                    ? Uni.createFrom().item(new Effect.Applied(
                            redeemed(id, userId, points, debited.iterator().next().getLong(0))))
                    // a refused work may share its transaction with others: it must leave no trace
                    : tx.preparedQuery(UNCLAIM).execute(Tuple.of(id)).replaceWith(new Effect.Refused(
                            "INSUFFICIENT_POINTS", "the balance of " + userId + " is less than " + points + " points")));
        });
    }

    /** The key's record was archived but its redemption is there: the same answer again, or a reused key. */
    private static Uni<Effect> earlier(SqlConnection tx, String userId, String idempotencyKey, int points) {
        return tx.preparedQuery(EARLIER).execute(Tuple.of(userId, idempotencyKey)).map(rows -> {
            Row row = rows.iterator().next();
            if (row.getInteger("points") != points) {
                return new Effect.Refused(PointsResource.KEY_REUSED,
                        "this Idempotency-Key was used with a different request body");
            }
            return new Effect.AlreadyApplied(redeemed(row.getUUID("redemption_id"), userId, points,
                    row.getLong("balance_after")));
        });
    }

    public Uni<Long> balance(String userId) {
        return pool.preparedQuery("SELECT points FROM points_balance WHERE user_id = $1").execute(Tuple.of(userId))
                .map(PointsService::firstLongOrZero);
    }

    private static long firstLongOrZero(RowSet<Row> rows) {
        return rows.size() == 0 ? 0 : rows.iterator().next().getLong(0);
    }

    /**
     * The stored answer of a redemption: what a replay sends again. The body is kept as text, since
     * jsonb would reorder its members and a replay is to answer byte for byte what the first did.
     */
    private static JsonObject redeemed(UUID id, String userId, int points, long balance) {
        return new JsonObject().put("status", 201).put("body", new JsonObject()
                .put("redemptionId", id.toString())
                .put("userId", userId)
                .put("points", points)
                .put("balance", balance)
                .encode());
    }

    /** Keys are per user: the user id is encoded so that no (user, key) pair can pose as another. */
    private static String keyOf(String userId, String idempotencyKey) {
        return URLEncoder.encode(userId, StandardCharsets.UTF_8) + ":" + idempotencyKey;
    }
}
