package dev.idem.ops;

import dev.idem.outbox.OutboxRepository;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The console's charts over the last hour: every {@code idem.console.sample-interval} the
 * pipeline's counters are read and what they gained since the last sample is kept, with the
 * outbox's lag at that moment, in a ring in this instance's memory. Each instance keeps its own
 * (it counts what it served) and starts empty; nothing of it is stored.
 */
@ApplicationScoped
public class ConsoleHistory {

    /** What the counters gained in one interval ending {@code at}, per scope; the outbox lag then, when known. */
    record Sample(Instant at, Counts counts, Optional<Long> outboxLagSeconds) {}

    /**
     * Counter values: deliveries by scope and outcome, duplicates by scope and layer, degraded Redis
     * calls by scope.
     */
    record Counts(Map<String, Map<String, Long>> deliveries, Map<String, Map<String, Long>> duplicates,
                  Map<String, Long> redisDegraded) {

        static Counts read(MeterRegistry registry) {
            return new Counts(byScope(registry, "idem.pipeline.outcomes", "outcome"),
                    byScope(registry, "idem.pipeline.duplicates", "layer"),
                    flat(byScope(registry, "idem.redis.degraded", "scope")));
        }

        Counts minus(Counts earlier) {
            return new Counts(minus(deliveries, earlier.deliveries), minus(duplicates, earlier.duplicates),
                    minusFlat(redisDegraded, earlier.redisDegraded));
        }

        private static Map<String, Map<String, Long>> byScope(MeterRegistry registry, String name, String tag) {
            Map<String, Map<String, Long>> counts = new TreeMap<>();
            for (Counter counter : registry.find(name).counters()) {
                String scope = tag.equals("scope") ? "all" : counter.getId().getTag("scope");
                counts.computeIfAbsent(scope, s -> new TreeMap<>())
                        .merge(counter.getId().getTag(tag), (long) counter.count(), Long::sum);
            }
            return counts;
        }

        private static Map<String, Long> flat(Map<String, Map<String, Long>> byScope) {
            return byScope.getOrDefault("all", Map.of());
        }

        private static Map<String, Map<String, Long>> minus(Map<String, Map<String, Long>> now,
                                                            Map<String, Map<String, Long>> before) {
            Map<String, Map<String, Long>> gained = new TreeMap<>();
            now.forEach((scope, values) -> gained.put(scope, minusFlat(values, before.getOrDefault(scope, Map.of()))));
            return gained;
        }

        private static Map<String, Long> minusFlat(Map<String, Long> now, Map<String, Long> before) {
            Map<String, Long> gained = new TreeMap<>();
            now.forEach((key, value) -> gained.put(key, value - before.getOrDefault(key, 0L)));
            return gained;
        }

        static final Counts NONE = new Counts(Map.of(), Map.of(), Map.of());
    }

    private final MeterRegistry registry;
    private final OutboxRepository outbox;
    private final Pool pool;
    private final OpsConfig.Console config;
    private final Clock clock;
    private final int capacity;
    private final Deque<Sample> ring = new ArrayDeque<>();
    private Counts sampled = Counts.NONE;

    ConsoleHistory(MeterRegistry registry, OutboxRepository outbox, Pool pool, OpsConfig config, Clock clock) {
        this.registry = registry;
        this.outbox = outbox;
        this.pool = pool;
        this.config = config.console();
        this.clock = clock;
        this.capacity = (int) Math.max(1, this.config.history().toMillis() / this.config.sampleInterval().toMillis());
    }

    /** One interval's sample into the ring; none before start-up has migrated the schema. */
    @Scheduled(every = "${idem.console.sample-interval}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> sample() {
        return outboxLag().invoke(lag -> keep(lag)).replaceWithVoid();
    }

    /**
     * The samples, oldest first, and what the counters gained since the last one (the interval in
     * progress), so that the charts are current between samples.
     */
    public Uni<JsonObject> history() {
        return outboxLag().map(lag -> {
            JsonArray samples = new JsonArray();
            Sample current;
            synchronized (this) {
                ring.forEach(sample -> samples.add(toJson(sample)));
                current = new Sample(clock.instant(), Counts.read(registry).minus(sampled), lag);
            }
            return new JsonObject()
                    .put("intervalSeconds", config.sampleInterval().toSeconds())
                    .put("historySeconds", config.history().toSeconds())
                    .put("samples", samples)
                    .put("current", toJson(current));
        });
    }

    private synchronized void keep(Optional<Long> lag) {
        Counts now = Counts.read(registry);
        ring.addLast(new Sample(clock.instant(), now.minus(sampled), lag));
        sampled = now;
        while (ring.size() > capacity) {
            ring.removeFirst();
        }
    }

    /** The age of the oldest unpublished outbox event; unknown (empty) when Postgres does not answer. */
    private Uni<Optional<Long>> outboxLag() {
        return outbox.oldestUnpublished(pool)
                .map(oldest -> Optional.of(oldest
                        .map(at -> Math.max(0, Duration.between(at, clock.instant()).toSeconds())).orElse(0L)))
                .onFailure().recoverWithItem(Optional.empty());
    }

    private static JsonObject toJson(Sample sample) {
        return new JsonObject()
                .put("at", sample.at().toString())
                .put("deliveries", toJson(sample.counts().deliveries()))
                .put("duplicates", toJson(sample.counts().duplicates()))
                .put("redisDegraded", flatJson(sample.counts().redisDegraded()))
                .put("outboxLagSeconds", sample.outboxLagSeconds().orElse(null));
    }

    private static JsonObject toJson(Map<String, Map<String, Long>> byScope) {
        JsonObject json = new JsonObject();
        byScope.forEach((scope, values) -> json.put(scope, flatJson(values)));
        return json;
    }

    private static JsonObject flatJson(Map<String, Long> values) {
        JsonObject json = new JsonObject();
        values.forEach(json::put);
        return json;
    }
}
