package dev.idem.coupons;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Layer;
import dev.idem.pipeline.Outcome;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;

/** Grants coupons once per business key, through the same pipeline as every other entry point. */
@ApplicationScoped
public class CouponService {

    public static final String SCOPE = "coupon-grant";

    private final IdempotencyPipeline pipeline;
    private final CouponRepository coupons;
    private final Pool pool;
    private final CouponsConfig config;
    private final Clock clock;

    CouponService(IdempotencyPipeline pipeline, CouponRepository coupons, Pool pool, CouponsConfig config, Clock clock) {
        this.pipeline = pipeline;
        this.coupons = coupons;
        this.pool = pool;
        this.config = config;
        this.clock = clock;
    }

    public Uni<Outcome> grant(CouponGrant grant) {
        if (!config.pipeline()) {
            return pool.withTransaction(tx -> insert(tx, grant)).map(effect -> effect instanceof Effect.Applied applied
                    ? new Outcome.Processed(applied.result())
                    : new Outcome.Duplicate(Layer.STATE, new JsonObject()));
        }
        return pipeline.execute(grant.idemRequest(SCOPE), tx -> insert(tx, grant));
    }

    private Uni<Effect> insert(SqlConnection tx, CouponGrant grant) {
        Coupon coupon = new Coupon(UUID.randomUUID().toString(), grant.userId(), grant.templateId(),
                grant.bizKey(), grant.orderId(), clock.instant().truncatedTo(ChronoUnit.MICROS));
        return coupons.grant(tx, coupon).map(inserted -> inserted
                ? new Effect.Applied(new JsonObject().put("couponId", coupon.couponId()))
                // the dedup record was gone (archived) but the source already has its coupon
                : new Effect.AlreadyApplied(new JsonObject().put("sourceKey", grant.bizKey())));
    }

    public Uni<List<Coupon>> ofUser(String userId) {
        return coupons.ofUser(pool, userId);
    }
}
