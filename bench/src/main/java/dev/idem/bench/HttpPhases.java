package dev.idem.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/**
 * The HTTP figures of one service, idem (outbox relay off) or a comparison service of the same
 * contract. What it measures ({@code --kinds}, joined by +): {@code keys} (Idempotency-Key first
 * executions, then replays), {@code callbacks} (first-delivery signed callbacks, then duplicate
 * deliveries), {@code bare} (the one-Redis-GET endpoint, in step with the duplicates: the two
 * sides of a ratio at the same concurrencies), {@code first} (first deliveries alone), {@code e2e}
 * (first deliveries for BENCH_E2E_SECONDS at BENCH_E2E_CONCURRENCY with the outbox published and
 * coupons granted, then how many paid orders lack their coupon, until none do). A warm-up
 * of every kind comes first, in rounds until the service's JIT is quiet. Then each figure as a
 * ramp of concurrency that stops when the throughput grows by less than BENCH_STOP_GAIN, or, for
 * the comparison ({@code --fixed true}), one step at each of BENCH_PEER_CONCURRENCY after at
 * least BENCH_PEER_WARMUP seconds of warm-up, the same for every service, BENCH_PEER_ROUNDS times
 * (the step of the median rate is kept, beside every round's rate).
 * <pre>
 *   http --url U --pid PID --run RUN --out F [--kinds keys+callbacks+bare] [--fixed false] [--name N]
 *        [--idle-seconds 0] [--started bench|no] [--secret S] [--fresh-db JDBC-URL --db-user U --db-password P]
 *   compare --run RUN --kinds K --a-url U --a-pid PID --a-out F ... --b-url U --b-pid PID --b-out F ...
 * </pre>
 * {@code compare} measures two services side by side, each on its own database, with the options of
 * {@code http --fixed true} for each side prefixed {@code a-} or {@code b-}: they take {@link Turns},
 * each round of a step on one right beside the same round on the other.
 */
final class HttpPhases {

    private static final int TOP_UP_CONCURRENCY = 32;
    private static final int WARMUP_CONCURRENCY = 16;

    private final Settings settings;
    private final Load load;
    private final Proc proc;
    private final Metrics metrics;
    private final Ops ops;
    private final List<String> kinds;
    private final boolean fixed;
    private final Runnable analyze;
    private final String dbUrl;
    private final String dbUser;
    private final String dbPassword;
    private final Turns turns;
    private final int side;

    private HttpPhases(Settings settings, Args args, Load load, Proc proc, Metrics metrics, Turns turns, int side) {
        this.settings = settings;
        this.load = load;
        this.proc = proc;
        this.metrics = metrics;
        this.ops = new Ops(args.get("secret", settings.secret()));
        this.kinds = List.of(args.get("kinds", "keys+callbacks+bare").split("\\+"));
        this.fixed = Boolean.parseBoolean(args.get("fixed", "false"));
        String freshDb = args.get("fresh-db", "");
        this.analyze = freshDb.isEmpty() ? () -> Db.analyze(settings)
                : () -> Db.analyze(freshDb, args.get("db-user"), args.get("db-password"), "ANALYZE");
        this.dbUrl = freshDb.isEmpty() ? settings.jdbcUrl() : freshDb;
        this.dbUser = freshDb.isEmpty() ? settings.jdbcUser() : args.get("db-user");
        this.dbPassword = freshDb.isEmpty() ? settings.jdbcPassword() : args.get("db-password");
        this.turns = turns;
        this.side = side;
    }

    static void run(Settings settings, Args args) throws Exception {
        run(settings, args, Turns.SOLO, 0);
    }

    /** Two services side by side, each side's options prefixed {@code a-} or {@code b-}; both measured on the same kinds. */
    static void compare(Settings settings, Args args) throws Exception {
        Turns turns = Turns.pair();
        ExecutorService sides = Executors.newFixedThreadPool(2);
        try {
            List<Future<Void>> runs = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                int side = i;
                Args own = args.side(side == 0 ? "a-" : "b-");
                runs.add(sides.submit(() -> {
                    run(settings, own, turns, side);
                    return null;
                }));
            }
            Exception failed = null;
            for (Future<Void> run : runs) {
                try {
                    run.get();
                } catch (ExecutionException e) {
                    failed = e.getCause() instanceof Exception cause ? cause : e;
                }
            }
            if (failed != null) {
                throw failed;
            }
        } finally {
            sides.shutdownNow();
        }
    }

    private static void run(Settings settings, Args args, Turns turns, int side) throws Exception {
        URI url = URI.create(args.get("url"));
        long pid = args.number("pid", 0);
        JsonObject result = new JsonObject().put("name", args.get("name", "idem")).put("url", url.toString())
                .put("servicePid", pid).put("startedByBench", !"no".equals(args.get("started", "bench")))
                .put("freshDatabase", args.get("fresh-db", null)).put("kinds", args.get("kinds", "keys+callbacks+bare"));
        Proc proc = new Proc(pid, settings.clockTicks());
        try (Load load = new Load(url.getHost(), url.getPort() > 0 ? url.getPort() : 80, proc, settings.loadLoops(), turns)) {
            // the memory of the service at rest, --idle-seconds after it got ready
            Thread.sleep(args.number("idle-seconds", 0) * 1000);
            result.put("rssIdleKb", proc.rssKb());
            new HttpPhases(settings, args, load, proc, new Metrics(url), turns, side).all(result,
                    "bench-" + args.get("run") + ("idem".equals(args.get("name", "idem")) ? "" : "-" + args.get("name")));
        } catch (Exception e) {
            // what was measured before still goes to the report, beside what went wrong
            result.put("error", String.valueOf(e.getMessage()));
            throw e;
        } finally {
            // whatever ended this side, the other one goes on alone
            turns.leave();
            proc.close();
            Files.writeString(Path.of(args.get("out")), result.encodePrettily());
        }
    }

    private boolean has(String kind) {
        return kinds.contains(kind);
    }

    private void all(JsonObject result, String user) throws Exception {
        double warm = settings.warmupSeconds();
        double least = fixed ? settings.peerWarmup() : 0;
        Ops.Pool warmPool = new Ops.Pool(user + "-w");
        double[] warmRate = {100};
        Progress.say("warm-up: " + warm + " s per kind of request, not counted, until the JIT is quiet"
                + (least > 0 ? " and " + least + " s have passed" : ""));
        result.put("warmupRounds", Warmup.untilJitQuiet("warm-up", least, round -> {
            List<Load.Step> steps = new ArrayList<>();
            steps.add(load.closed("warm-up orders", WARMUP_CONCURRENCY, warm, ops.createOrders(warmPool, -1)));
            // the orders' keys are in the tables now: plan the callbacks for tables that hold rows
            analyze.run();
            if (has("callbacks") || has("first") || has("e2e")) {
                steps.add(load.closed("warm-up callbacks", WARMUP_CONCURRENCY, Math.max(warm, 30),
                        ops.firstDeliveries(warmPool, null)));
                warmRate[0] = Math.max(warmRate[0], steps.get(steps.size() - 1).rate());
            }
            if (has("callbacks")) {
                steps.add(load.closed("warm-up duplicates", WARMUP_CONCURRENCY, warm / 2, ops.duplicates(warmPool)));
            }
            if (has("bare")) {
                steps.add(load.closed("warm-up bare", WARMUP_CONCURRENCY, warm / 2, ops.bare()));
            }
            if (has("keys")) {
                steps.add(load.closed("warm-up replays", WARMUP_CONCURRENCY, warm / 2,
                        ops.replayOrders(warmPool, warmPool.orders.size())));
            }
            if (steps.stream().allMatch(s -> s.ok == 0)) {
                throw new IllegalStateException("the service answered no warm-up request: " + steps.get(0).failures);
            }
            return steps.stream().mapToDouble(Load.Step::jit).max().orElse(0);
        }));
        proc.checkAlive();

        Ops.Pool pool = new Ops.Pool(user);
        Map<String, Double> before = metrics.snapshot();
        if (has("keys")) {
            Progress.say("Idempotency-Key first executions: POST /api/orders with new keys (these orders are paid next)");
            result.put("keyFirst", ramp(List.of("key first"), List.of(c -> load.closed("key first", c, settings.seconds(),
                    ops.createOrders(pool, -1)))).get(0));
            proc.checkAlive();
        }
        int keyed = pool.orders.size();
        if (has("callbacks") || has("first")) {
            Progress.say("first-delivery callbacks: one signed SUCCESS per fresh WAIT_PAY order");
            double[] fastest = {warmRate[0]};
            long[] rssMax = {0};
            JsonArray topUps = new JsonArray();
            JsonObject first = ramp(List.of("callbacks first"), List.of(c -> {
                // a step may pay what the fastest step so far did at up to 2.5 times its concurrency
                topUp(pool, (long) Math.ceil(fastest[0] * settings.seconds() * 2.5) + c).ifPresent(s -> topUps.add(s.toJson()));
                proc.takeRssMaxKb();
                Load.Step step = load.closed("callbacks first", c, settings.seconds(), ops.firstDeliveries(pool, null));
                rssMax[0] = Math.max(rssMax[0], proc.takeRssMaxKb());
                fastest[0] = Math.max(fastest[0], step.rate());
                return step;
            })).get(0);
            result.put("callbacksFirst", first.put("orderTopUps", topUps).put("paidOrders", pool.paid)
                    .put("redisDegraded", Metrics.sum(Metrics.delta(before, metrics.snapshot()), "idem_redis_degraded_total")));
            result.put("rssMaxKbDuringCallbacks", rssMax[0]);
            proc.checkAlive();
        }
        if (has("callbacks")) {
            Progress.say("duplicate deliveries (the callbacks of the " + pool.paid + " paid orders again)"
                    + (has("bare") ? ", each step followed by the bare endpoint (GET /bench/redis-get)" : ""));
            List<IntFunction<Load.Step>> steps = new ArrayList<>(List.of(
                    c -> load.closed("duplicates", c, settings.seconds(), ops.duplicates(pool))));
            if (has("bare")) {
                steps.add(c -> load.closed("bare redis-get", c, settings.seconds(), ops.bare()));
            }
            Map<String, Double> m = metrics.snapshot();
            List<JsonObject> ramps = ramp(List.of("duplicates", "bare redis-get"), steps);
            JsonObject delta = Metrics.delta(m, metrics.snapshot());
            String metric = "idem_pipeline_duplicates_total";
            result.put("duplicates", ramps.get(0)
                    .put("answeredByRedis", Metrics.sum(delta, metric, "scope=\"payment-callback\"", "layer=\"redis\""))
                    .put("answeredByAnyLayer", Metrics.sum(delta, metric, "scope=\"payment-callback\"")));
            if (has("bare")) {
                result.put("bare", ramps.get(1));
            }
            proc.checkAlive();
        }
        if (has("keys")) {
            Progress.say("Idempotency-Key replays: the same keys and bodies again");
            result.put("keyReplay", ramp(List.of("key replay"), List.of(c -> load.closed("key replay", c,
                    settings.seconds(), ops.replayOrders(pool, keyed)))).get(0));
        }
        if (has("e2e")) {
            int c = settings.endToEndConcurrency();
            Progress.say("end to end: first-delivery callbacks at c=" + c + " for " + settings.endToEndSeconds()
                    + " s, the outbox published and coupons granted meanwhile; then the paid orders without their coupon");
            topUp(pool, (long) Math.ceil(warmRate[0] * settings.endToEndSeconds() * 2.5) + c);
            Load.Step step = load.closed("end to end", c, settings.endToEndSeconds(), ops.firstDeliveries(pool, null));
            result.put("endToEnd", step.toJson().put("coupons", couponsBehind()));
        }
        result.put("rssMaxKbOverall", proc.takeRssMaxKb()).put("paidUser", user);
    }

    /** New orders until {@code pool} holds {@code need} unpaid ones; the step that made them, if one was needed. */
    private Optional<Load.Step> topUp(Ops.Pool pool, long need) {
        return pool.unpaid() >= need ? Optional.empty() : Optional.of(load.closed("(new orders)", TOP_UP_CONCURRENCY, 300,
                ops.createOrders(pool, (int) (pool.nextKey + need - pool.unpaid()))));
    }

    /** Paid orders without their coupon, the same for idem and the Spring peer: both key a grant by {@code paid:<order id>}. */
    private static final String BEHIND = """
            SELECT count(*) AS paid,
                   count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM coupons c WHERE c.source_key = 'paid:' || o.id)) AS behind
            FROM orders o WHERE o.status = 'PAID'""";

    /**
     * How far behind the coupons were when the load stopped: the paid orders without theirs then,
     * and every quarter of a second until none or BENCH_E2E_DRAIN_SECONDS passed.
     */
    private JsonObject couponsBehind() throws SQLException, InterruptedException {
        long stopped = System.nanoTime();
        try (Connection db = Db.connect(dbUrl, dbUser, dbPassword);
             PreparedStatement query = db.prepareStatement(BEHIND)) {
            long[] first = behind(query);
            long[] now = first;
            double seconds = 0;
            while (now[1] > 0 && seconds < settings.endToEndDrainSeconds()) {
                Thread.sleep(250);
                now = behind(query);
                seconds = (System.nanoTime() - stopped) / 1e9;
            }
            Progress.say(String.format("coupons: %d paid orders, %d without their coupon at the stop, %d after %.1f s",
                    first[0], first[1], now[1], seconds));
            return new JsonObject().put("paidOrders", now[0]).put("behindAtStop", first[1]).put("behindAtEnd", now[1])
                    .put("caughtUpSeconds", now[1] == 0 ? seconds : null);
        }
    }

    private static long[] behind(PreparedStatement query) throws SQLException {
        try (ResultSet row = query.executeQuery()) {
            row.next();
            return new long[] {row.getLong("paid"), row.getLong("behind")};
        }
    }

    /** The round of the median rate (the lower of the middle two). */
    private static Load.Step median(List<Load.Step> rounds) {
        List<Load.Step> sorted = rounds.stream().sorted(Comparator.comparingDouble(Load.Step::rate)).toList();
        return sorted.get((sorted.size() - 1) / 2);
    }

    /**
     * Ramps of one or more kinds of request in step: each concurrency runs every kind, one after
     * the other, so that a ratio between them compares the same concurrencies at nearly the same
     * moment of a shared machine. A ramp goes on while any kind still gains the stop gain over its
     * best (after three steps at least, so one noisy step early on cannot end it); a fixed one
     * runs every concurrency.
     */
    private List<JsonObject> ramp(List<String> names, List<IntFunction<Load.Step>> kinds) {
        List<JsonArray> steps = new ArrayList<>();
        Load.Step[] peaks = new Load.Step[kinds.size()];
        int[] concurrency = fixed ? settings.peerConcurrency() : settings.concurrency();
        for (int i = 0; i < concurrency.length; i++) {
            boolean growing = false;
            boolean failed = false;
            for (int k = 0; k < kinds.size(); k++) {
                IntFunction<Load.Step> kind = kinds.get(k);
                int c = concurrency[i];
                List<Load.Step> rounds = new ArrayList<>();
                for (int r = 0; r < (fixed ? settings.peerRounds() : 1) && (r == 0 || rounds.get(r - 1).ok > 0); r++) {
                    rounds.add(turns.beside(side, r, () -> kind.apply(c)));
                }
                Load.Step s = median(rounds);
                if (i == 0) {
                    steps.add(new JsonArray());
                }
                JsonObject json = s.toJson();
                if (fixed) {
                    json.put("roundsPerSecond", new JsonArray(rounds.stream().map(x -> Load.round(x.rate(), 1)).toList()));
                }
                steps.get(k).add(json);
                growing |= peaks[k] == null || s.rate() >= peaks[k].rate() * (1 + settings.stopGain());
                peaks[k] = peaks[k] == null || s.rate() > peaks[k].rate() ? s : peaks[k];
                failed |= s.ok == 0;
            }
            if (failed || !proc.alive() || (!fixed && i >= 2 && !growing)) {
                if (fixed) {
                    // the other service's steps would no longer meet this one's
                    turns.leave();
                }
                break;
            }
        }
        List<JsonObject> ramps = new ArrayList<>();
        for (int k = 0; k < kinds.size(); k++) {
            ramps.add(new JsonObject().put("name", names.get(k)).put("steps", steps.get(k)).put("peak", peaks[k].toJson()));
        }
        return ramps;
    }
}
