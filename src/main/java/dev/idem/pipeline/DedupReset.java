package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Lets a key be processed again. For repair only: when reconciliation finds that the effect a DONE
 * record vouches for is gone (a coupon deleted by hand), the record must go too, or the re-sent
 * work would be answered as a duplicate. The business tables' own unique keys still stop doubles.
 */
@ApplicationScoped
public class DedupReset {

    private final Pool pool;
    private final DedupStore store;
    private final RedisGuard redis;

    DedupReset(Pool pool, DedupStore store, RedisGuard redis) {
        this.pool = pool;
        this.store = store;
        this.redis = redis;
    }

    public Uni<Void> forget(String scope, String key) {
        return store.forget(pool, scope, key).chain(() -> redis.forget(scope, key));
    }
}
