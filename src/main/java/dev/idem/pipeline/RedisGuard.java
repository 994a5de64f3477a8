package dev.idem.pipeline;

import io.quarkus.logging.Log;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.redis.datasource.value.ReactiveValueCommands;
import io.quarkus.redis.datasource.value.SetArgs;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * The pipeline's first layer: one Redis round trip that claims a key and tells what was there.
 * Redis is a cache, never the source of truth, so every failure or slow answer degrades to
 * "ask the database" and is counted.
 */
@ApplicationScoped
class RedisGuard {

    static final String PROCESSING = "PROCESSING";
    private static final String DONE = "DONE ";

    /** What the pre-check found. */
    sealed interface PreCheck {
        /** Nothing was there; this delivery now holds the PROCESSING marker. */
        record Claimed() implements PreCheck {}

        /** Another delivery marked the key PROCESSING; only the database can tell more. */
        record Processing() implements PreCheck {}

        /** The work is done: its fingerprint and stored result. */
        record Done(String fingerprint, JsonObject result) implements PreCheck {}

        /** Redis failed or was too slow; the layer is skipped. */
        record Unavailable() implements PreCheck {}
    }

    private final ReactiveRedisDataSource redis;
    private final ReactiveValueCommands<String, String> values;
    private final PipelineConfig config;
    private final PipelineMetrics metrics;

    RedisGuard(ReactiveRedisDataSource redis, PipelineConfig config, PipelineMetrics metrics) {
        this.redis = redis;
        this.values = redis.value(String.class);
        this.config = config;
        this.metrics = metrics;
    }

    /** {@code SET key PROCESSING NX GET PX ttl}: claims the key and returns what was there. */
    Uni<PreCheck> preCheck(IdemRequest request) {
        SetArgs args = new SetArgs().nx().px(config.redisTtl(request.scope()));
        return values.setGet(redisKey(request), PROCESSING, args)
                .ifNoItem().after(config.redisBudget()).fail()
                .map(RedisGuard::parse)
                .onFailure().recoverWithItem(failure -> degraded(request, "precheck", failure));
    }

    /**
     * The pre-checks of a batch, pipelined: one write to Redis and one read of all the answers.
     * Each answer means what {@link #preCheck} would have returned.
     */
    Uni<List<PreCheck>> preCheckAll(List<IdemRequest> requests) {
        List<Request> commands = new ArrayList<>(requests.size());
        for (IdemRequest request : requests) {
            commands.add(Request.cmd(Command.SET).arg(redisKey(request)).arg(PROCESSING).arg("NX").arg("GET")
                    .arg("PX").arg(config.redisTtl(request.scope()).toMillis()));
        }
        return pipelined(requests, "precheck", commands, RedisGuard::parse, new PreCheck.Unavailable());
    }

    /** Written only after the database committed, so DONE in Redis always has a durable twin. */
    Uni<Void> markDone(IdemRequest request, JsonObject result) {
        return values.set(redisKey(request), doneValue(request, result.encode()),
                        new SetArgs().px(config.redisTtl(request.scope())))
                .ifNoItem().after(config.redisBudget()).fail()
                .onFailure().recoverWithItem(failure -> {
                    degraded(request, "mark-done", failure);
                    return null;
                });
    }

    /** {@link #markDone} for a batch's keys and results (encoded JSON), pipelined. */
    Uni<Void> markDoneAll(List<IdemRequest> requests, List<String> results) {
        if (requests.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        List<Request> commands = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            IdemRequest request = requests.get(i);
            commands.add(Request.cmd(Command.SET).arg(redisKey(request)).arg(doneValue(request, results.get(i)))
                    .arg("PX").arg(config.redisTtl(request.scope()).toMillis()));
        }
        return pipelined(requests, "mark-done", commands, answer -> null, null).replaceWithVoid();
    }

    /** What Redis holds for a key, for people reading a key's trail; empty when nothing or unreachable. */
    Uni<Optional<String>> peek(String scope, String key) {
        return values.get(redisKey(scope, key))
                .ifNoItem().after(config.redisBudget()).fail()
                .map(Optional::ofNullable)
                .onFailure().recoverWithItem(Optional.empty());
    }

    /** Drops whatever Redis holds for a key; best effort, Redis is only a cache. */
    Uni<Void> forget(String scope, String key) {
        return redis.key(String.class).del(redisKey(scope, key))
                .ifNoItem().after(config.redisBudget()).fail()
                .replaceWithVoid()
                .onFailure().recoverWithNull();
    }

    /**
     * Sends {@code commands} in one batch; a failed or slow batch counts every request as
     * degraded and answers {@code fallback} for each.
     */
    private <A> Uni<List<A>> pipelined(List<IdemRequest> requests, String operation, List<Request> commands,
                                       Function<String, A> read, A fallback) {
        return redis.getRedis().batch(commands)
                .ifNoItem().after(config.redisBatchBudget()).fail()
                .map(responses -> {
                    List<A> answers = new ArrayList<>(responses.size());
                    for (Response response : responses) {
                        answers.add(read.apply(response == null ? null : response.toString()));
                    }
                    return answers;
                })
                .onFailure().recoverWithItem(failure -> {
                    requests.forEach(request -> degraded(request, operation, failure));
                    return Collections.nCopies(requests.size(), fallback);
                });
    }

    private static String doneValue(IdemRequest request, String result) {
        return DONE + request.fingerprint() + " " + result;
    }

    private PreCheck degraded(IdemRequest request, String operation, Throwable failure) {
        metrics.redisDegraded(request.scope(), operation);
        Log.debugf("Redis skipped for %s (%s): %s", request.scope(), operation, failure.toString());
        return new PreCheck.Unavailable();
    }

    private String redisKey(IdemRequest request) {
        return redisKey(request.scope(), request.key());
    }

    private String redisKey(String scope, String key) {
        return config.redisPrefix() + ":" + scope + ":" + key;
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
                            new JsonObject(previous.substring(split + 1)));
                } catch (RuntimeException unreadable) {
                    // a value this version cannot read is no answer: the database decides
                }
            }
        }
        return new PreCheck.Processing();
    }
}
