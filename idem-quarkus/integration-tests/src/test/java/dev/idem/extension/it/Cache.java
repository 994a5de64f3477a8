package dev.idem.extension.it;

import static org.awaitility.Awaitility.await;

import dev.idem.pipeline.PipelineConfig;
import io.quarkus.redis.datasource.RedisDataSource;
import io.vertx.mutiny.redis.client.Response;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** The pipeline's entries in Redis (database 6): {@code <redis-prefix>:<scope>:<key>}. */
@Singleton
final class Cache {

    static final Duration PATIENCE = Duration.ofSeconds(30);

    private final RedisDataSource redis;
    private final PipelineConfig config;

    @Inject
    Cache(RedisDataSource redis, PipelineConfig config) {
        this.redis = redis;
        this.config = config;
    }

    String key(String scope, String key) {
        return config.redisPrefix() + ":" + scope + ":" + key;
    }

    /** The key of a request by {@code caller} ({@code idem.pipeline.http.caller-header}); callers here need no encoding. */
    String key(String scope, String caller, String key) {
        return key(scope, caller + ":" + key);
    }

    String get(String redisKey) {
        Response value = redis.execute("GET", redisKey);
        return value == null ? null : value.toString();
    }

    boolean exists(String redisKey) {
        return redis.execute("EXISTS", redisKey).toInteger() == 1;
    }

    /** Redis hears DONE after the commit, without the answer waiting for it. */
    void awaitDone(String redisKey) {
        await().atMost(PATIENCE).until(() -> {
            String value = get(redisKey);
            return value != null && value.startsWith("DONE");
        });
    }

    /** The ways a key's Redis entry is lost while its record stays in Postgres. */
    enum Loss {
        /** Deleted (DEL), by an operator or an eviction. */
        DELETED {
            @Override
            void lose(Cache cache, String redisKey) {
                cache.redis.execute("DEL", redisKey);
            }
        },
        /** Expired: its TTL set to 1 ms, then gone. */
        EXPIRED {
            @Override
            void lose(Cache cache, String redisKey) {
                cache.redis.execute("PEXPIRE", redisKey, "1");
                await().atMost(PATIENCE).pollInterval(5, TimeUnit.MILLISECONDS).until(() -> !cache.exists(redisKey));
            }
        },
        /** Its whole database flushed (FLUSHDB), as a Redis restarted empty. */
        FLUSHED {
            @Override
            void lose(Cache cache, String redisKey) {
                cache.redis.execute("FLUSHDB");
            }
        };

        abstract void lose(Cache cache, String redisKey);
    }
}
