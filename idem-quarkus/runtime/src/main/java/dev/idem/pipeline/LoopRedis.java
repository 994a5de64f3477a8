package dev.idem.pipeline;

import io.quarkus.redis.client.RedisOptionsCustomizer;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.redis.runtime.client.config.RedisConfig;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.impl.ContextInternal;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import io.vertx.redis.client.RedisClientType;
import io.vertx.redis.client.RedisOptions;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

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
 *
 * <p>{@link #send} goes further: the commands a loop sends in one turn (the requests it read from
 * every connection that was ready) leave in one write, as Redis's pipelining allows, instead of one
 * write and one read on each side per command. On two cores a command's system calls cost more
 * than Redis's work on it. A command Redis refuses fails the others of its turn too: each of them
 * then asks the database, as after any Redis failure.
 */
@ApplicationScoped
class LoopRedis {

    private final Vertx vertx;
    private final DefaultOptions options;
    private final Redis shared;
    private final Map<Thread, Loop> byLoop = new ConcurrentHashMap<>();
    private final Set<Thread> requested = ConcurrentHashMap.newKeySet();

    LoopRedis(Vertx vertx, DefaultOptions options, ReactiveRedisDataSource redis) {
        this.vertx = vertx;
        this.options = options;
        this.shared = redis.getRedis();
    }

    /**
     * Sends {@code request} with the other commands of the caller's loop in this turn, on that loop's
     * client; the reply goes on in the caller's context. Where one write cannot carry several commands
     * (off a loop, a Redis Cluster, whose connections route by key) it is sent alone.
     */
    Uni<Response> send(Request request) {
        return Uni.createFrom().emitter(reply -> {
            Loop loop = byLoop.get(Thread.currentThread());
            if (loop == null || clustered()) {
                current().send(request).subscribe().with(reply::complete, reply::fail);
            } else {
                loop.add(new Sent(request, reply, (ContextInternal) Vertx.currentContext()));
            }
        });
    }

    /** The client of the calling event loop. */
    Redis current() {
        Thread thread = Thread.currentThread();
        Loop own = byLoop.get(thread);
        if (own != null) {
            return own.client;
        }
        Context context = Vertx.currentContext();
        RedisOptions defaults = options.captured;
        if (context != null && Context.isOnEventLoopThread() && defaults != null && requested.add(thread)) {
            // created from the loop's root context: the client keeps the context it is made on,
            // and a request's duplicated context must not outlive the request
            Context root = VertxContext.getRootContext(context);
            root.runOnContext(ignored -> byLoop.put(thread, new Loop(root,
                    Redis.newInstance(io.vertx.redis.client.Redis.createClient(vertx, ownPool(defaults, thread))))));
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
        byLoop.values().forEach(loop -> loop.client.close());
    }

    /** A loop's client and the commands it gathers in the current turn; touched on that loop's thread only. */
    private static final class Loop {
        private final Context root;
        private final Redis client;
        private List<Sent> turn = new ArrayList<>();

        Loop(Context root, Redis client) {
            this.root = root;
            this.client = client;
        }

        /** The first command of a turn sends them all once the loop is done with what it read. */
        void add(Sent sent) {
            if (turn.isEmpty()) {
                root.runOnContext(ignored -> sendAll());
            }
            turn.add(sent);
        }

        private void sendAll() {
            List<Sent> sent = turn;
            turn = new ArrayList<>();
            Uni<List<Response>> answered = sent.size() == 1
                    ? client.send(sent.get(0).request()).map(Collections::singletonList)
                    : client.batch(sent.stream().map(Sent::request).toList());
            answered.subscribe().with(answers -> {
                for (int i = 0; i < sent.size(); i++) {
                    Response answer = answers.get(i);
                    sent.get(i).onCaller(reply -> reply.complete(answer));
                }
            }, failure -> sent.forEach(one -> one.onCaller(reply -> reply.fail(failure))));
        }
    }

    /** A command, who waits for its reply, and the context that reply goes on in (a request's own, with its trace and log fields). */
    private record Sent(Request request, UniEmitter<? super Response> reply, ContextInternal caller) {
        void onCaller(Consumer<UniEmitter<? super Response>> answer) {
            if (caller == null) {
                answer.accept(reply);
            } else {
                caller.emit(reply, answer::accept);
            }
        }
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
