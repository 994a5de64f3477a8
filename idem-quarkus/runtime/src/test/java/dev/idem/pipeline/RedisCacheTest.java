package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.redis.datasource.value.ReactiveValueCommands;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import io.vertx.redis.client.impl.types.BulkType;
import java.lang.reflect.Proxy;
import java.net.ConnectException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class RedisCacheTest {

    private static final IdemRequest ORDER = new IdemRequest("orders", "o-1", "fp-1");
    private static final IdemRequest OTHER = new IdemRequest("orders", "o-2", "fp-2");

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final PipelineConfig config = Configs.pipeline(Map.of(
            "idem.pipeline.redis-budget", "20ms",
            "idem.pipeline.redis-batch-budget", "20ms"));
    /**
     * A budget that an answer given at once cannot miss: Mutiny starts the budget's timer before the
     * answer arrives, and on a loaded machine the test's thread can stall past 20 ms in between.
     */
    private final PipelineConfig roomy = Configs.pipeline(Map.of("idem.pipeline.redis-budget", "10s"));

    @Test
    void absentValueMeansThisDeliveryClaimedTheKey() {
        assertInstanceOf(DedupCache.PreCheck.Claimed.class, RedisCache.parse(null));
    }

    @Test
    void doneCarriesFingerprintAndResult() {
        DedupCache.PreCheck pre = RedisCache.parse("DONE abc123 {\"code\":\"SUCCESS\",\"note\":\"a b\"}");
        DedupCache.PreCheck.Done done = assertInstanceOf(DedupCache.PreCheck.Done.class, pre);
        assertEquals("abc123", done.fingerprint());
        assertEquals(new JsonObject().put("code", "SUCCESS").put("note", "a b"), done.result());
    }

    @Test
    void anythingElseIsLeftToTheDatabase() {
        assertInstanceOf(DedupCache.PreCheck.Processing.class, RedisCache.parse("PROCESSING"));
        assertInstanceOf(DedupCache.PreCheck.Processing.class, RedisCache.parse("DONE abc {not json"));
        assertInstanceOf(DedupCache.PreCheck.Processing.class, RedisCache.parse("DONE "));
    }

    @Test
    void answersWithinTheBudgetAreReadAndNothingIsDegraded() {
        RedisCache cache = cache(new ScriptedRedis(request -> Uni.createFrom().nullItem()), roomy);
        assertInstanceOf(DedupCache.PreCheck.Claimed.class, await(cache.preCheck(ORDER)));

        RedisCache done = cache(new ScriptedRedis(request -> Uni.createFrom().item(bulk("DONE fp-1 {\"code\":\"SUCCESS\"}"))),
                roomy);
        assertEquals(new DedupCache.PreCheck.Done("fp-1", new JsonObject().put("code", "SUCCESS")),
                await(done.preCheck(ORDER)));
        assertEquals(0.0, degraded("precheck"));
    }

    @Test
    void anAnswerSlowerThanTheBudgetDegradesToUnavailableAndIsCounted() {
        RedisCache cache = cache(request -> Uni.createFrom().nothing());

        assertInstanceOf(DedupCache.PreCheck.Unavailable.class, await(cache.preCheck(ORDER)));
        assertEquals(1.0, degraded("precheck"));
    }

    @Test
    void aFailingRedisDegradesToUnavailableAndIsCounted() {
        RedisCache cache = cache(request -> Uni.createFrom().failure(new ConnectException("Connection refused")));

        assertInstanceOf(DedupCache.PreCheck.Unavailable.class, await(cache.preCheck(ORDER)));
        assertEquals(1.0, degraded("precheck"));
    }

    /**
     * The budget runs out on Mutiny's timer thread; the delivery must go on on its own event loop,
     * where group commit queues it (off a loop it would get a transaction of its own).
     */
    @Test
    void aPreCheckPastItsBudgetAnswersOnTheCallersEventLoop() throws Exception {
        RedisCache cache = cache(request -> Uni.createFrom().nothing());
        Vertx vertx = Vertx.vertx();
        try {
            CompletableFuture<Thread> loop = new CompletableFuture<>();
            CompletableFuture<Thread> answeredOn = new CompletableFuture<>();
            vertx.getOrCreateContext().runOnContext(ignored -> {
                loop.complete(Thread.currentThread());
                cache.preCheck(ORDER).subscribe().with(pre -> answeredOn.complete(Thread.currentThread()),
                        answeredOn::completeExceptionally);
            });
            assertSame(loop.get(10, TimeUnit.SECONDS), answeredOn.get(10, TimeUnit.SECONDS));
            assertEquals(1.0, degraded("precheck"));
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aSlowBatchPreCheckLeavesEveryKeyToTheDatabaseAndCountsEach() {
        RedisCache cache = cache(request -> Uni.createFrom().nothing());

        List<DedupCache.PreCheck> checks = await(cache.preCheckAll(List.of(ORDER, OTHER)));

        assertEquals(List.of(new DedupCache.PreCheck.Unavailable(), new DedupCache.PreCheck.Unavailable()), checks);
        assertEquals(2.0, degraded("precheck"));
    }

    @Test
    void aFailingMarkDoneNeverFailsTheCallerAndIsCounted() {
        ScriptedRedis redis = new ScriptedRedis(request -> Uni.createFrom().failure(new ConnectException("Connection reset")));
        RedisCache cache = cache(redis);

        await(cache.markDone(ORDER, "{\"code\":\"SUCCESS\"}"));
        await(cache.markDoneAll(List.of(ORDER, OTHER), List.of("{}", "{}")));

        assertEquals(3.0, degraded("mark-done"));
        assertEquals(2, redis.sent.size());
    }

    private RedisCache cache(Function<Request, Uni<Response>> answers) {
        return cache(new ScriptedRedis(answers));
    }

    private RedisCache cache(ScriptedRedis redis) {
        return cache(redis, config);
    }

    /** The cache as production builds it, on a Redis client whose answers the test scripts. */
    private RedisCache cache(ScriptedRedis redis, PipelineConfig config) {
        ReactiveRedisDataSource source = proxy(ReactiveRedisDataSource.class, name -> switch (name) {
            case "getRedis" -> redis;
            case "value" -> proxy(ReactiveValueCommands.class, unused -> {
                throw new UnsupportedOperationException(unused);
            });
            default -> throw new UnsupportedOperationException(name);
        });
        // without captured options no per-loop client is made: every command goes through the shared one
        LoopRedis loops = new LoopRedis(null, new LoopRedis.DefaultOptions(), source);
        return new RedisCache(source, loops, config, new PipelineMetrics(registry), Clock.systemUTC());
    }

    private double degraded(String operation) {
        return registry.find("idem.redis.degraded").tags("scope", "orders", "operation", operation).counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    private static Response bulk(String value) {
        return Response.newInstance(BulkType.create(Buffer.buffer(value), false));
    }

    private static <T> T await(Uni<T> uni) {
        return uni.await().atMost(Duration.ofSeconds(10));
    }

    private static <T> T proxy(Class<T> type, Function<String, Object> byMethod) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (self, method, args) -> byMethod.apply(method.getName())));
    }

    /** A Redis client that answers each command as the test says, and keeps what it was sent. */
    private static final class ScriptedRedis extends Redis {
        final List<Request> sent = new CopyOnWriteArrayList<>();
        private final Function<Request, Uni<Response>> answers;

        ScriptedRedis(Function<Request, Uni<Response>> answers) {
            super((Object) null);
            this.answers = answers;
        }

        @Override
        public Uni<Response> send(Request request) {
            sent.add(request);
            return answers.apply(request);
        }
    }
}
