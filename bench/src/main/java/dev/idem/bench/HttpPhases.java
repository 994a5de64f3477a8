package dev.idem.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * The HTTP part, against one service with the outbox relay off (the callback's transaction still
 * writes the outbox row; only the publishing waits for the Kafka part):
 * warm-up, Idempotency-Key first executions, first-delivery callbacks, duplicate deliveries with the
 * bare one-Redis-GET endpoint in step (the two ratios' sides at the same concurrencies), and
 * Idempotency-Key replays, each as a ramp of concurrency that stops when the throughput grows by
 * less than {@code BENCH_STOP_GAIN}.
 */
final class HttpPhases {

    private static final int TOP_UP_CONCURRENCY = 32;
    /** Orders made before the first step when no keyed ramp measured how fast they come (per second of a step). */
    private static final double FIRST_ESTIMATE = 2_000;

    private final Settings settings;
    private final Load load;
    private final Proc proc;
    private final Metrics metrics;
    private final Ops ops;

    /** Whether the service has the bench's yardsticks (the bare endpoint); a production build has not. */
    private final boolean bare;
    /** Only the first-delivery ramp ({@code --only first}): another database's price, not the service's profile. */
    private final boolean firstOnly;

    private HttpPhases(Settings settings, Load load, Proc proc, Metrics metrics, boolean bare, boolean firstOnly) {
        this.settings = settings;
        this.bare = bare;
        this.firstOnly = firstOnly;
        this.load = load;
        this.proc = proc;
        this.metrics = metrics;
        this.ops = new Ops(settings.secret());
    }

    static void run(Settings settings, Args args) throws Exception {
        int port = args.integer("port");
        Proc proc = new Proc(Long.parseLong(args.get("pid")), settings.clockTicks());
        String run = args.get("run");
        try (Load load = new Load(port, proc)) {
            JsonObject result = new HttpPhases(settings, load, proc, new Metrics(port),
                    Boolean.parseBoolean(args.get("bare", "true")), "first".equals(args.get("only", "all")))
                    .all("bench-" + run);
            Files.writeString(Path.of(args.get("out")), result.encodePrettily());
        } finally {
            proc.close();
        }
    }

    private JsonObject all(String user) throws Exception {
        JsonObject result = new JsonObject();
        double warm = settings.warmupSeconds();
        double[] warmCallbacks = {0};
        if (warm > 0) {
            Progress.say("warm-up: " + warm + " s per kind of request, not counted, until the JIT is quiet");
            Ops.Pool pool = new Ops.Pool(user + "-w");
            result.put("warmupRounds", Warmup.untilJitQuiet("warm-up", round -> {
                List<Load.Step> steps = new ArrayList<>();
                steps.add(load.closed("warm-up orders", 16, warm, ops.createOrders(pool, -1)));
                // the orders' keys are in the tables now: plan the callbacks for tables that hold rows
                Db.analyze(settings, "the warm-up orders of round " + round);
                steps.add(load.closed("warm-up callbacks", 16, Math.max(warm, 30), ops.firstDeliveries(pool, null)));
                warmCallbacks[0] = steps.get(steps.size() - 1).rate();
                steps.add(load.closed("warm-up duplicates", 16, warm / 2, ops.duplicates(pool)));
                if (bare) {
                    steps.add(load.closed("warm-up bare", 16, warm / 2, ops.bare()));
                }
                steps.add(load.closed("warm-up replays", 16, warm / 2, ops.replayOrders(pool, pool.orders.size())));
                return steps.stream().mapToDouble(Load.Step::jit).max().orElse(0);
            }));
            Db.analyze(settings, "the warm-up");
        }
        checkAlive();

        Ops.Pool pool = new Ops.Pool(user);

        Map<String, Double> m0 = metrics.snapshot();
        // without a keyed ramp, the last warm-up's callbacks (c=16) size the orders of the first
        // step, so that a ramp of one high step (a fixed concurrency) does not run out of them
        double firstEstimate = Math.max(FIRST_ESTIMATE, warmCallbacks[0] * 1.5);
        int keyed = 0;
        if (!firstOnly) {
            Progress.say("Idempotency-Key first executions: POST /api/orders with new keys (these orders are paid next)");
            JsonObject keyFirst = ramp("key first", c -> load.closed("key first", c, settings.seconds(),
                    ops.createOrders(pool, -1)));
            keyed = pool.orders.size();
            keyFirst.put("metrics", Metrics.delta(m0, metrics.snapshot()));
            result.put("keyFirst", keyFirst);
            firstEstimate = keyFirst.getJsonObject("peak").getDouble("perSecond");
            checkAlive();
        }
        Map<String, Double> m1 = metrics.snapshot();

        Progress.say("first-delivery callbacks: one signed SUCCESS per fresh WAIT_PAY order");
        double[] estimate = {firstEstimate};
        long[] rssMax = {0};
        JsonArray topUps = new JsonArray();
        JsonObject first = ramp("callbacks first", c -> {
            long need = (long) Math.ceil(estimate[0] * settings.seconds() * 1.1) + c;
            if (pool.unpaid() < need) {
                int limit = (int) (pool.nextKey + (need - pool.unpaid()));
                Load.Step topUp = load.closed("(new orders)", TOP_UP_CONCURRENCY, 300,
                        ops.createOrders(pool, limit));
                topUps.add(topUp.toJson());
            }
            proc.takeRssMaxKb();
            Load.Step step = load.closed("callbacks first", c, settings.seconds(), ops.firstDeliveries(pool, null));
            rssMax[0] = Math.max(rssMax[0], proc.takeRssMaxKb());
            // the next step has twice the concurrency; past the first steps that rarely gains 50%
            estimate[0] = Math.max(step.rate() * 1.5, 100);
            return step;
        });
        Map<String, Double> m2 = metrics.snapshot();
        first.put("metrics", Metrics.delta(m1, m2)).put("orderTopUps", topUps).put("paidOrders", pool.paid);
        result.put("callbacksFirst", first);
        result.put("rssMaxKbDuringCallbacks", rssMax[0]);
        checkAlive();
        if (firstOnly) {
            result.put("paidUser", user);
            return result;
        }

        Progress.say("duplicate deliveries (the callbacks of the " + pool.paid + " paid orders again)"
                + (bare ? ", each step followed by the bare endpoint (GET /bench/redis-get, one Redis GET)" : ""));
        IntFunction<Load.Step> dups = c -> load.closed("duplicates", c, settings.seconds(), ops.duplicates(pool));
        List<JsonObject> paired = bare
                ? ramps(List.of("duplicates", "bare redis-get"), List.of(dups,
                        c -> load.closed("bare redis-get", c, settings.seconds(), ops.bare())))
                : List.of(ramp("duplicates", dups));
        JsonObject duplicates = paired.get(0);
        Map<String, Double> m3 = metrics.snapshot();
        JsonObject dupMetrics = Metrics.delta(m2, m3);
        duplicates.put("metrics", dupMetrics);
        long byRedis = Metrics.sum(dupMetrics, "idem_pipeline_duplicates_total", "scope=\"payment-callback\"",
                "layer=\"redis\"");
        long byAll = Metrics.sum(dupMetrics, "idem_pipeline_duplicates_total", "scope=\"payment-callback\"");
        duplicates.put("answeredByRedis", byRedis).put("answeredByAnyLayer", byAll);
        result.put("duplicates", duplicates);
        if (bare) {
            result.put("bare", paired.get(1));
        }
        checkAlive();

        Progress.say("Idempotency-Key replays: the same keys and bodies again");
        Map<String, Double> m4 = metrics.snapshot();
        int replayed = keyed;
        JsonObject replays = ramp("key replay", c -> load.closed("key replay", c, settings.seconds(),
                ops.replayOrders(pool, replayed)));
        replays.put("metrics", Metrics.delta(m4, metrics.snapshot()));
        result.put("keyReplay", replays);

        result.put("rssMaxKbOverall", proc.takeRssMaxKb());
        result.put("paidUser", user);
        return result;
    }

    /** Steps of rising concurrency until the throughput grows by less than the stop gain. */
    private JsonObject ramp(String name, IntFunction<Load.Step> step) {
        return ramps(List.of(name), List.of(step)).get(0);
    }

    /**
     * Ramps of several kinds of request in step: each concurrency runs every kind, one after the
     * other, so that a ratio between them compares the same concurrencies at nearly the same moment
     * of a shared machine. The ramps go on while any kind still gains the stop gain over its best.
     */
    private List<JsonObject> ramps(List<String> names, List<IntFunction<Load.Step>> kinds) {
        List<List<Load.Step>> steps = new ArrayList<>();
        Load.Step[] peaks = new Load.Step[kinds.size()];
        kinds.forEach(kind -> steps.add(new ArrayList<>()));
        for (int c : settings.concurrency()) {
            boolean growing = false;
            boolean failed = false;
            for (int k = 0; k < kinds.size(); k++) {
                Load.Step s = kinds.get(k).apply(c);
                steps.get(k).add(s);
                Load.Step previous = peaks[k];
                if (previous == null || s.rate() > previous.rate()) {
                    peaks[k] = s;
                }
                failed |= s.ok == 0;
                growing |= previous == null || s.rate() >= previous.rate() * (1 + settings.stopGain());
            }
            // at least three steps, so one noisy step early on cannot end the ramp
            if (failed || !proc.alive() || (steps.get(0).size() >= 3 && !growing)) {
                break;
            }
        }
        List<JsonObject> ramps = new ArrayList<>();
        for (int k = 0; k < kinds.size(); k++) {
            JsonArray all = new JsonArray();
            steps.get(k).forEach(s -> all.add(s.toJson()));
            ramps.add(new JsonObject().put("name", names.get(k)).put("steps", all)
                    .put("peak", peaks[k] == null ? null : peaks[k].toJson()));
        }
        return ramps;
    }

    private void checkAlive() {
        if (!proc.alive()) {
            throw new IllegalStateException("the service process is gone");
        }
    }
}
