package dev.idem.pipeline;

import io.quarkus.redis.client.RedisOptionsCustomizer;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.redis.runtime.client.config.RedisConfig;
import io.smallrye.common.vertx.VertxContext;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.redis.client.RedisClientType;
import io.vertx.redis.client.RedisOptions;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Singleton;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A Redis client per event loop, for the commands on a request's path. Vert.x's Redis client
 * opens its pooled connections on the event loop it was created on, so one shared client reads
 * every reply on that loop and hands it over to the caller's: one loop carries all Redis I/O and
 * every request on another loop pays two hand-overs per command. Here a command is written and
 * its reply read on the caller's own loop.
 *
 * <p>The clients take the options Quarkus built for its default client (hosts, database, pool
 * size, TLS, password), each with that pool to itself, named {@code <client>@<loop thread>}. Off
 * an event loop, and on a loop until its client exists, the shared client serves.
 */
@ApplicationScoped
class LoopRedis {

    private final Vertx vertx;
    private final DefaultOptions options;
    private final Redis shared;
    private final Map<Thread, Redis> byLoop = new ConcurrentHashMap<>();
    private final Set<Thread> requested = ConcurrentHashMap.newKeySet();

    LoopRedis(Vertx vertx, DefaultOptions options, ReactiveRedisDataSource redis) {
        this.vertx = vertx;
        this.options = options;
        this.shared = redis.getRedis();
    }

    /** The client of the calling event loop. */
    Redis current() {
        Thread thread = Thread.currentThread();
        Redis own = byLoop.get(thread);
        if (own != null) {
            return own;
        }
        Context context = Vertx.currentContext();
        RedisOptions defaults = options.captured;
        if (context != null && Context.isOnEventLoopThread() && defaults != null && requested.add(thread)) {
            // created from the loop's root context: the client keeps the context it is made on,
            // and a request's duplicated context must not outlive the request
            VertxContext.getRootContext(context).runOnContext(ignored -> byLoop.put(thread,
                    Redis.newInstance(io.vertx.redis.client.Redis.createClient(vertx, ownPool(defaults, thread)))));
        }
        return shared;
    }

    /**
     * The default client's options with a pool named after the loop. Pool metrics are keyed by
     * name: under the default client's name every loop's gauges would be dropped as duplicates
     * of the first pool's, and the pools that carry the traffic would show as idle.
     */
    private static RedisOptions ownPool(RedisOptions defaults, Thread loop) {
        String name = defaults.getPoolName() == null ? "redis" : defaults.getPoolName();
        return new RedisOptions(defaults).setPoolName(name + "@" + loop.getName());
    }

    /** Whether the default client talks to a Redis Cluster, where a script may touch one slot only. */
    boolean clustered() {
        RedisOptions defaults = options.captured;
        return defaults != null && defaults.getType() == RedisClientType.CLUSTER;
    }

    @PreDestroy
    void close() {
        byLoop.values().forEach(Redis::close);
    }

    /** Keeps a copy of the options of Quarkus's default Redis client, as Quarkus creates it. */
    @Singleton
    static class DefaultOptions implements RedisOptionsCustomizer {

        private volatile RedisOptions captured;

        @Override
        public void customize(String clientName, RedisOptions options) {
            if (RedisConfig.isDefaultClient(clientName)) {
                captured = new RedisOptions(options);
            }
        }
    }
}
