package dev.idem.coupons;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Item;
import dev.idem.pipeline.Outcome;
import dev.idem.pipeline.TwoPhaseScope;
import dev.idem.pipeline.TwoPhaseWork;
import dev.idem.pipeline.Work;
import dev.idem.support.TimeOrderedIds;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Default;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Grants coupons once per business key, through the same pipeline as every other entry point.
 * The paid-order campaign's coupons are issued here, in the grant's transaction, or by the
 * external issuer ({@code idem.campaign.paid-coupon-issuer=external}): then the grant takes the
 * pipeline's two-phase mode, whose work this class also is, and the local row is written at
 * confirmation with the issuer's coupon id. Injected as a service (default) and found by the
 * pipeline as the two-phase work of its scope.
 */
@ApplicationScoped
@Default
@TwoPhaseScope(CouponService.SCOPE)
public class CouponService implements TwoPhaseWork {

    public static final String SCOPE = "coupon-grant";

    private final IdempotencyPipeline pipeline;
    private final CouponRepository coupons;
    private final Pool pool;
    private final CouponsConfig.Campaign campaign;
    private final ExternalCouponIssuer issuer;
    private final Clock clock;

    CouponService(IdempotencyPipeline pipeline, CouponRepository coupons, Pool pool,
                  CouponsConfig config, ExternalCouponIssuer issuer, Clock clock) {
        this.pipeline = pipeline;
        this.coupons = coupons;
        this.pool = pool;
        this.campaign = config.campaign();
        this.issuer = issuer;
        this.clock = clock;
    }

    public Uni<Outcome> grant(CouponGrant grant) {
        if (issuedExternally(grant)) {
            return pipeline.executeTwoPhase(grant.idemRequest(SCOPE), payload(grant));
        }
        return pipeline.execute(grant.idemRequest(SCOPE), local(grant));
    }

    /**
     * Grants a batch (one Kafka poll) and answers each grant's outcome, in order. Local grants go
     * through the batch form of the pipeline; grants for the external issuer take the two-phase
     * mode one by one, since their effect lies outside any transaction.
     */
    public Uni<List<Outcome>> grantAll(List<CouponGrant> grants) {
        List<Uni<Outcome>> external = new ArrayList<>();
        List<Item> local = new ArrayList<>();
        for (CouponGrant grant : grants) {
            if (issuedExternally(grant)) {
                external.add(grant(grant));
            } else {
                local.add(new Item(grant.idemRequest(SCOPE), local(grant)));
            }
        }
        Uni<List<Outcome>> locals = pipeline.executeAll(local);
        if (external.isEmpty()) {
            return locals;
        }
        return locals.chain(localOutcomes -> Uni.join().all(external).andFailFast().map(externalOutcomes -> {
            Iterator<Outcome> fromBatch = localOutcomes.iterator();
            Iterator<Outcome> oneByOne = externalOutcomes.iterator();
            return grants.stream().map(grant -> issuedExternally(grant) ? oneByOne.next() : fromBatch.next()).toList();
        }));
    }

    /** The coupon inserted in the grant's own transaction. */
    private Work local(CouponGrant grant) {
        return tx -> insert(tx, grant, newCouponId());
    }

    /** The external issuer serves the paid-order campaign; other templates stay local. */
    private boolean issuedExternally(CouponGrant grant) {
        return campaign.paidCouponIssuer() == CouponsConfig.Campaign.Issuer.EXTERNAL
                && campaign.paidCouponTemplate().filter(grant.templateId()::equals).isPresent();
    }

    /** The external issuer, asked with the grant's key: a repeated call answers the same coupon. */
    @Override
    public Uni<JsonObject> perform(String key, JsonObject payload) {
        CouponGrant grant = grant(payload);
        return issuer.issue(key, grant.userId(), grant.templateId())
                .map(couponId -> new JsonObject().put("couponId", couponId));
    }

    /** The local row of the coupon the issuer issued, with its id. */
    @Override
    public Uni<Effect> confirm(SqlConnection tx, String key, JsonObject payload, JsonObject performed) {
        return insert(tx, grant(payload), performed.getString("couponId"));
    }

    Uni<Effect> insert(SqlConnection tx, CouponGrant grant, String couponId) {
        Coupon coupon = new Coupon(couponId, grant.userId(), grant.templateId(),
                grant.bizKey(), grant.orderId(), clock.instant().truncatedTo(ChronoUnit.MICROS));
        return coupons.grant(tx, coupon).map(inserted -> inserted
                ? new Effect.Processed(new JsonObject().put("couponId", coupon.couponId()))
                // the dedup record was gone (archived) but the source already has its coupon
                : new Effect.Duplicate(new JsonObject().put("sourceKey", grant.bizKey())));
    }

    /** In time order: coupons' rows go to the right edge of their primary key ({@link TimeOrderedIds}). */
    String newCouponId() {
        return TimeOrderedIds.next(clock);
    }

    /** What a two-phase record keeps, so that recovery can ask the issuer again. */
    static JsonObject payload(CouponGrant grant) {
        return new JsonObject()
                .put("bizKey", grant.bizKey())
                .put("userId", grant.userId())
                .put("templateId", grant.templateId())
                .put("orderId", grant.orderId());
    }

    static CouponGrant grant(JsonObject payload) {
        return new CouponGrant(payload.getString("bizKey"), payload.getString("userId"),
                payload.getString("templateId"), payload.getString("orderId"));
    }

    public Uni<List<Coupon>> ofUser(String userId) {
        return coupons.ofUser(pool, userId);
    }
}
