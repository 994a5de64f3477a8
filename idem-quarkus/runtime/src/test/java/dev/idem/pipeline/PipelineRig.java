package dev.idem.pipeline;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pipeline as a service wires it, on the in-memory store and cache and a clock the test moves.
 * Works of the tests write one business row ({@code effect:<key>}) in the pipeline's transaction,
 * so what committed shows whose work took effect.
 */
final class PipelineRig {

    static final Instant START = Instant.parse("2025-03-01T10:00:00Z");

    final MovableClock clock = new MovableClock(START);
    /** The store: the committed records and business rows, and the transactions the pipeline ran. */
    final InMemoryDatabase db = new InMemoryDatabase();
    final DedupStore store = new InMemoryDedupStore(db);
    /** What other processes do to the database meanwhile, and statements that fail: arranged by a test. */
    final StoreFaults faults = db.faults;
    final InMemoryDedupCache cache = new InMemoryDedupCache().witnessing(request -> db.committed(request)
            .map(stored -> stored.record().status() == DedupRecord.Status.DONE).orElse(false));
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final PipelineMetrics metrics = new PipelineMetrics(registry);
    final PipelineConfig config;
    final OnePhase protocol;
    final GroupCommit groups;
    final TwoPhase twoPhase;
    final Map<String, TwoPhaseWork> twoPhaseWorks = new ConcurrentHashMap<>();
    final IdempotencyPipeline pipeline;
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    PipelineRig() {
        this(Map.of());
    }

    PipelineRig(Map<String, String> properties) {
        config = Configs.pipeline(properties);
        cache.expiring(clock, config);
        CacheFirst cacheFirst = new CacheFirst(cache, metrics, DeliveryTraces.NONE);
        protocol = new OnePhase(cacheFirst, store, config, metrics, clock);
        groups = new GroupCommit(protocol, metrics, config);
        TwoPhaseHandlers handlers = new TwoPhaseHandlers(scope -> Optional.ofNullable(twoPhaseWorks.get(scope)));
        twoPhase = new TwoPhase(cacheFirst, store, config, metrics, clock, handlers);
        pipeline = new IdempotencyPipeline(protocol, groups, new PollRounds(protocol), twoPhase, store, config);
    }

    /** Properties with {@code more} added. */
    static Map<String, String> with(Map<String, String> base, String... more) {
        Map<String, String> all = new HashMap<>(base);
        for (int i = 0; i < more.length; i += 2) {
            all.put(more[i], more[i + 1]);
        }
        return all;
    }

    static IdemRequest request(String scope, String key, Object... payload) {
        return new IdemRequest(scope, key, IdemRequest.fingerprint(payload));
    }

    static JsonObject result(String key) {
        return new JsonObject().put("key", key).put("code", "SUCCESS");
    }

    /** A work with {@code effect}: one business row, unless refused (a refused work writes nothing). */
    Work work(IdemRequest request, Effect effect) {
        return tx -> {
            runs.computeIfAbsent(request.key(), k -> new AtomicInteger()).incrementAndGet();
            if (effect instanceof Effect.Rejected) {
                return Uni.createFrom().item(effect);
            }
            return db.write(tx, "effect:" + request.key(), request.fingerprint()).replaceWith(effect);
        };
    }

    /**
     * A work whose business row is unique per key, as a newcomer writes it: a plain insert under
     * the table's own unique constraint, which fails when the row is there.
     */
    Work inserting(IdemRequest request) {
        return tx -> {
            runs.computeIfAbsent(request.key(), k -> new AtomicInteger()).incrementAndGet();
            return db.insert(tx, "effect:" + request.key(), request.fingerprint())
                    .replaceWith(new Effect.Processed(result(request.key())));
        };
    }

    Work applying(IdemRequest request) {
        return work(request, new Effect.Processed(result(request.key())));
    }

    /** How often the works of {@code key} ran, in any transaction. */
    int runs(String key) {
        AtomicInteger n = runs.get(key);
        return n == null ? 0 : n.get();
    }

    /** A DONE record another delivery committed, with {@code result}. */
    DedupRecord done(IdemRequest request, JsonObject result) {
        Instant now = clock.instant();
        return new DedupRecord(request.scope(), request.key(), request.fingerprint(), DedupRecord.Status.DONE, result,
                1, null, now, now, now.plus(config.retention(request.scope())));
    }

    double count(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
    }

    static <T> T await(Uni<T> uni) {
        return uni.await().atMost(Duration.ofSeconds(10));
    }
}
