package dev.idem.pipeline;

import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.redis.datasource.keys.KeyScanArgs;
import io.quarkus.redis.datasource.value.ReactiveValueCommands;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * The cache layer in Redis: {@code SET key PROCESSING NX GET PX ttl} claims a key and tells what
 * was there in one round trip. Every failure or answer slower than {@code idem.pipeline.redis-budget}
 * degrades to "ask the database" and is counted in {@code idem_redis_degraded_total}. Against a
 * Redis Cluster ({@code quarkus.redis.client-type=cluster}) the batch forms send one script per
 * hash slot, all at once, since a script there may touch the keys of one slot only.
 */
@ApplicationScoped
class RedisCache implements DedupCache {

    private static final Logger LOG = Logger.getLogger(RedisCache.class);

    static final String PROCESSING = "PROCESSING";
    private static final String DONE = "DONE ";
    private static final int SCAN_BATCH = 1_000;

    /*
     * The batch forms run as scripts: Redis executes the very commands of the single forms, and
     * the client builds and reads one request instead of one per key. EVAL rather than EVALSHA:
     * Redis caches the compiled script itself, and a restarted Redis needs no reload.
     * A nil reply (the key was free) reaches Lua as false and goes back as nil.
     */
    private static final String PRE_CHECK_ALL = """
            local replies = {}
            for i, key in ipairs(KEYS) do
              replies[i] = redis.call('SET', key, '%s', 'NX', 'GET', 'PX', ARGV[i])
            end
            return replies""".formatted(PROCESSING);

    private static final String MARK_DONE_ALL = """
            for i, key in ipairs(KEYS) do
              redis.call('SET', key, ARGV[2 * i - 1], 'PX', ARGV[2 * i])
            end
            return #KEYS""";

    /** Only a claim is given back: a key another delivery marked DONE meanwhile keeps its mark. */
    private static final String RELEASE_ALL = """
            local released = 0
            for _, key in ipairs(KEYS) do
              if redis.call('GET', key) == '%s' then
                released = released + redis.call('DEL', key)
              end
            end
            return released""".formatted(PROCESSING);

    private final ReactiveRedisDataSource redis;
    private final ReactiveValueCommands<String, String> values;
    /** The commands on a delivery's path go through the caller's event loop's own client. */
    private final LoopRedis loops;
    private final PipelineConfig config;
    private final PipelineMetrics metrics;
    private final OutageLog outage;

    RedisCache(ReactiveRedisDataSource redis, LoopRedis loops, PipelineConfig config, PipelineMetrics metrics,
               Clock clock) {
        this.redis = redis;
        this.values = redis.value(String.class);
        this.loops = loops;
        this.config = config;
        this.metrics = metrics;
        this.outage = new OutageLog(LOG, clock, "Redis", "deliveries go on without it and the database decides "
                + "each key (idem_redis_degraded_total counts the calls skipped)", "calls skipped");
    }

    /** One key's pre-check: {@code SET key PROCESSING NX GET PX ttl}. */
    Uni<PreCheck> preCheck(IdemRequest request) {
        Context caller = Vertx.currentContext();
        return loops.send(set(request, PROCESSING, "NX", "GET"))
                .ifNoItem().after(config.redisBudget()).fail()
                .invoke(outage::ok)
                .map(RedisCache::parse)
                .onFailure().recoverWithUni(failure -> onLoopOf(caller, degraded(request, "precheck", failure)));
    }

    /**
     * The pre-checks of a batch: the same {@code SET … NX GET PX} for every key, run by one script
     * call, so a poll of 500 costs one request and one reply instead of 500 of each. Each answer
     * means what {@link #preCheck} would have returned.
     */
    @Override
    public Uni<List<PreCheck>> preCheckAll(List<IdemRequest> requests) {
        if (requests.size() == 1) {
            return preCheck(requests.get(0)).map(List::of);
        }
        return perSlot(requests, this::preCheckSlot);
    }

    private Uni<List<PreCheck>> preCheckSlot(List<IdemRequest> requests) {
        Request script = script(PRE_CHECK_ALL, requests);
        for (IdemRequest request : requests) {
            script.arg(ttlMillis(request));
        }
        return scripted(requests, "precheck", script, replies -> {
            List<PreCheck> checks = new ArrayList<>(requests.size());
            for (int i = 0; i < requests.size(); i++) {
                checks.add(parse(replies.get(i)));
            }
            return checks;
        }, Collections.nCopies(requests.size(), new PreCheck.Unavailable()));
    }

    /** Written only after the database committed, so DONE in Redis always has a durable twin. */
    Uni<Void> markDone(IdemRequest request, String result) {
        return loops.send(set(request, doneValue(request, result)))
                .ifNoItem().after(config.redisBudget()).fail()
                .invoke(outage::ok)
                .<Void>replaceWithVoid()
                .onFailure().recoverWithItem(failure -> {
                    degraded(request, "mark-done", failure);
                    return null;
                });
    }

    /** {@link #markDone} for many keys, in one script call. */
    @Override
    public Uni<Void> markDoneAll(List<IdemRequest> requests, List<String> results) {
        if (requests.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        if (requests.size() == 1) {
            return markDone(requests.get(0), results.get(0));
        }
        Map<IdemRequest, String> resultOf = new IdentityHashMap<>();
        for (int i = 0; i < requests.size(); i++) {
            resultOf.put(requests.get(i), results.get(i));
        }
        return perSlot(requests, slot -> markDoneSlot(slot, slot.stream().map(resultOf::get).toList())
                .map(done -> Collections.<Void>nCopies(slot.size(), null)))
                .replaceWithVoid();
    }

    private Uni<Void> markDoneSlot(List<IdemRequest> requests, List<String> results) {
        Request script = script(MARK_DONE_ALL, requests);
        for (int i = 0; i < requests.size(); i++) {
            IdemRequest request = requests.get(i);
            script.arg(doneValue(request, results.get(i))).arg(ttlMillis(request));
        }
        return scripted(requests, "mark-done", script, reply -> null, null).replaceWithVoid();
    }

    @Override
    public Uni<Void> release(List<IdemRequest> requests) {
        if (requests.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return perSlot(requests, slot -> scripted(slot, "release", script(RELEASE_ALL, slot),
                        reply -> Collections.<Void>nCopies(slot.size(), null), Collections.<Void>nCopies(slot.size(), null)))
                .replaceWithVoid();
    }

    @Override
    public Uni<Optional<String>> peek(String scope, String key) {
        return values.get(redisKey(scope, key))
                .ifNoItem().after(config.redisBudget()).fail()
                .map(Optional::ofNullable)
                .onFailure().recoverWithItem(Optional.empty());
    }

    /** Best effort: Redis is only a cache. */
    @Override
    public Uni<Void> forget(String scope, String key) {
        return redis.key(String.class).del(redisKey(scope, key))
                .ifNoItem().after(config.redisBudget()).fail()
                .replaceWithVoid()
                .onFailure().recoverWithNull();
    }

    /**
     * {@code batch} over all of {@code requests} at once, or, against a Redis Cluster, over the
     * requests of each hash slot, all slots at once; the answers in the requests' order.
     */
    private <A> Uni<List<A>> perSlot(List<IdemRequest> requests, Function<List<IdemRequest>, Uni<List<A>>> batch) {
        if (!loops.clustered() || requests.size() < 2) {
            return batch.apply(requests);
        }
        List<List<Integer>> groups = RedisSlot.groups(requests.stream().map(this::redisKey).toList());
        if (groups.size() == 1) {
            return batch.apply(requests);
        }
        List<Uni<List<A>>> calls = new ArrayList<>(groups.size());
        for (List<Integer> group : groups) {
            calls.add(batch.apply(group.stream().map(requests::get).toList()));
        }
        return Uni.join().all(calls).andFailFast().map(answers -> {
            List<A> inOrder = new ArrayList<>(Collections.nCopies(requests.size(), null));
            for (int g = 0; g < groups.size(); g++) {
                List<Integer> group = groups.get(g);
                for (int i = 0; i < group.size(); i++) {
                    inOrder.set(group.get(i), answers.get(g).get(i));
                }
            }
            return inOrder;
        });
    }

    /** {@code EVAL body n key…}, the keys of {@code requests}; the caller appends the arguments. */
    private Request script(String body, List<IdemRequest> requests) {
        Request script = Request.cmd(Command.EVAL).arg(body).arg(requests.size());
        for (IdemRequest request : requests) {
            script.arg(redisKey(request));
        }
        return script;
    }

    /**
     * Runs a batch script and reads its reply; a failed or slow call counts every request as
     * degraded and answers {@code fallback}.
     */
    private <A> Uni<A> scripted(List<IdemRequest> requests, String operation, Request script,
                                Function<Response, A> read, A fallback) {
        Context caller = Vertx.currentContext();
        return loops.send(script)
                .ifNoItem().after(config.redisBatchBudget()).fail()
                .invoke(outage::ok)
                .map(read)
                .onFailure().recoverWithUni(failure -> {
                    requests.forEach(request -> degraded(request, operation, failure));
                    return onLoopOf(caller, fallback);
                });
    }

    /**
     * {@code item} on {@code caller}'s event loop. A budget runs out on Mutiny's timer thread, and
     * what follows a pre-check must go on where the delivery came from: group commit queues it on
     * that loop, and off a loop it would get a transaction of its own. Answers on a loop (Redis
     * replied, or refused) go on at once.
     */
    private static <T> Uni<T> onLoopOf(Context caller, T item) {
        if (caller == null || Context.isOnEventLoopThread()) {
            return Uni.createFrom().item(item);
        }
        return Uni.createFrom().emitter(emitter -> caller.runOnContext(ignored -> emitter.complete(item)));
    }

    /** {@code SET key value [options] PX ttl}: every write of a key carries its scope's TTL. */
    private Request set(IdemRequest request, String value, String... options) {
        Request set = Request.cmd(Command.SET).arg(redisKey(request)).arg(value);
        for (String option : options) {
            set.arg(option);
        }
        return set.arg("PX").arg(ttlMillis(request));
    }

    private long ttlMillis(IdemRequest request) {
        return config.redisTtl(request.scope()).toMillis();
    }

    /**
     * SCAN over the pipeline's prefix, then the values of each batch of keys. On a Redis Cluster
     * the client scans one node: the check then sees that node's keys only.
     */
    @Override
    public Uni<List<Mark>> doneMarks(int limit) {
        String prefix = config.redisPrefix() + ":";
        return redis.key(String.class).scan(new KeyScanArgs().match(prefix + "*").count(SCAN_BATCH)).toMulti()
                .select().first(limit)
                .group().intoLists().of(SCAN_BATCH)
                .onItem().transformToUniAndConcatenate(keys -> values.mget(keys.toArray(String[]::new)))
                .onItem().transformToIterable(found -> found.entrySet().stream()
                        .filter(e -> e.getValue() != null && e.getValue().startsWith(DONE))
                        .map(e -> mark(e.getKey().substring(prefix.length())))
                        .toList())
                .collect().asList();
    }

    /** {@code <scope>:<key>}: scopes hold no colon, keys may. */
    private static Mark mark(String scoped) {
        int split = scoped.indexOf(':');
        return new Mark(scoped.substring(0, split), scoped.substring(split + 1));
    }

    private static String doneValue(IdemRequest request, String result) {
        return DONE + request.fingerprint() + " " + result;
    }

    private PreCheck degraded(IdemRequest request, String operation, Throwable failure) {
        metrics.redisDegraded(request.scope(), operation);
        outage.failed(operation + " for " + request.scope() + ": " + failure);
        return new PreCheck.Unavailable();
    }

    private String redisKey(IdemRequest request) {
        return redisKey(request.scope(), request.key());
    }

    /** Where Redis keeps a scope's key. */
    String redisKey(String scope, String key) {
        return config.redisPrefix() + ":" + scope + ":" + key;
    }

    /** A reply of {@code SET … GET}: nil when the key was free. */
    private static PreCheck parse(Response previous) {
        return parse(previous == null ? null : previous.toString());
    }

    static PreCheck parse(String previous) {
        if (previous == null) {
            return new PreCheck.Claimed();
        }
        if (previous.startsWith(DONE)) {
            int split = previous.indexOf(' ', DONE.length());
            if (split > 0) {
                try {
                    return new PreCheck.Done(previous.substring(DONE.length(), split),
                            JsonText.decode(previous.substring(split + 1)));
                } catch (RuntimeException unreadable) {
                    // a value this version cannot read is no answer: the database decides
                }
            }
        }
        return new PreCheck.Processing();
    }
}
