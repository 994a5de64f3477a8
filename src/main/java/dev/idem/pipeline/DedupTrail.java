package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;

/** Everything known about one key, for the person investigating it: Redis, the hot row, the archive. */
@ApplicationScoped
public class DedupTrail {

    private final Pool pool;
    private final DedupStore store;
    private final DedupArchive archive;
    private final RedisGuard redis;

    DedupTrail(Pool pool, DedupStore store, DedupArchive archive, RedisGuard redis) {
        this.pool = pool;
        this.store = store;
        this.archive = archive;
        this.redis = redis;
    }

    /** The trail as JSON, or empty when no layer has ever heard of the key. */
    public Uni<Optional<JsonObject>> of(String scope, String key) {
        return Uni.combine().all()
                .unis(store.find(pool, scope, key), archive.find(pool, scope, key), redis.peek(scope, key))
                .asTuple()
                .map(found -> {
                    if (found.getItem1().isEmpty() && found.getItem2().isEmpty() && found.getItem3().isEmpty()) {
                        return Optional.empty();
                    }
                    JsonArray archived = new JsonArray();
                    found.getItem2().forEach(a -> archived.add(toJson(a.record()).put("archivedAt", a.archivedAt().toString())));
                    return Optional.of(new JsonObject()
                            .put("scope", scope)
                            .put("key", key)
                            .put("redis", found.getItem3().orElse(null))
                            .put("record", found.getItem1().map(DedupTrail::toJson).orElse(null))
                            .put("archived", archived));
                });
    }

    private static JsonObject toJson(DedupRecord r) {
        return new JsonObject()
                .put("status", r.status().name())
                .put("fingerprint", r.fingerprint())
                .put("attempts", r.attempts())
                .put("result", r.result())
                .put("leaseUntil", r.leaseUntil() == null ? null : r.leaseUntil().toString())
                .put("createdAt", r.createdAt().toString())
                .put("updatedAt", r.updatedAt().toString())
                .put("expiresAt", r.expiresAt().toString());
    }
}
