package dev.idem.coupons;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Layer;
import dev.idem.pipeline.Outcome;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.enterprise.inject.Typed;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.util.List;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The baseline of the benchmark's Kafka ratio, in the benchmark's build only ({@code ./mvnw
 * -Pbench}): with {@code idem.bench.coupons-pipeline=false} the grant consumer inserts a poll's
 * coupons in one transaction, each guarded only by the unique source key, with no Redis and no
 * dedup record. Otherwise it grants as the service does. A singleton: a normal-scoped subclass
 * would need a no-argument constructor for its proxy. It stays in CouponService's package: it
 * needs that class's package-private constructor and insert, which production code keeps closed.
 */
@Singleton
@Alternative
@Priority(1)
@Typed(CouponService.class)
public class BaselineCouponService extends CouponService {

    private final Pool pool;
    private final boolean pipeline;

    BaselineCouponService(IdempotencyPipeline pipeline, CouponRepository coupons, Pool pool,
                          CouponsConfig config, ExternalCouponIssuer issuer, Clock clock,
                          @ConfigProperty(name = "idem.bench.coupons-pipeline", defaultValue = "true") boolean on) {
        super(pipeline, coupons, pool, config, issuer, clock);
        this.pool = pool;
        this.pipeline = on;
    }

    @Override
    public Uni<Outcome> grant(CouponGrant grant) {
        return pipeline ? super.grant(grant) : withoutPipeline(List.of(grant)).map(outcomes -> outcomes.get(0));
    }

    @Override
    public Uni<List<Outcome>> grantAll(List<CouponGrant> grants) {
        return pipeline ? super.grantAll(grants) : withoutPipeline(grants);
    }

    private Uni<List<Outcome>> withoutPipeline(List<CouponGrant> grants) {
        return pool.withTransaction(tx -> Uni.join().all(grants.stream()
                        .map(grant -> insert(tx, grant, newCouponId())).toList()).andFailFast())
                .map(effects -> effects.stream().map(effect -> effect instanceof Effect.Processed applied
                        ? (Outcome) new Outcome.Processed(applied.result())
                        : new Outcome.Duplicate(Layer.STATE, new JsonObject())).toList());
    }
}
