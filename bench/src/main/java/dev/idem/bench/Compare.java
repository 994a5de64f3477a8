package dev.idem.bench;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * One service of the comparison ({@code BENCH_PEERS} in scripts/bench.sh): idem, or a comparison
 * service that serves the same HTTP contract at some URL, measured on what it serves:
 * <ul>
 *   <li>{@code callbacks}: first-delivery signed callbacks, each paying an order created through
 *       {@code POST /api/orders} beforehand (not measured), then duplicate deliveries of them;</li>
 *   <li>{@code keys}: Idempotency-Key first executions of {@code POST /api/orders}, then replays.</li>
 * </ul>
 * Each kind gets the same warm-up on every service, for a fixed time ({@code BENCH_PEER_WARMUP_*}):
 * "until the JIT is quiet", as in the HTTP part, would give each service another warm-up. Then one
 * step at each fixed concurrency ({@code BENCH_PEER_CONCURRENCY}), not a ramp that stops at the
 * best: the ratios are read concurrency by concurrency.
 */
final class Compare {

    /** A load generator thread above this share of a core was the cap of its step. */
    static final double SATURATED = 0.85;

    private static final int WARMUP_CONCURRENCY = 32;
    private static final int TOP_UP_CONCURRENCY = 32;
    /** The longest part of a warm-up round, so that the kinds of request take turns. */
    private static final double WARMUP_ROUND_SECONDS = 10;

    private final Settings settings;
    private final Load load;
    private final Proc proc;
    private final Ops ops;
    private final String user;

    private Compare(Settings settings, Load load, Proc proc, Ops ops, String user) {
        this.settings = settings;
        this.load = load;
        this.proc = proc;
        this.ops = ops;
        this.user = user;
    }

    /**
     * {@code compare --name N --url U --pid P --kinds auto|callbacks|keys|callbacks+keys --run R
     * --started bench|no --out F [--secret S] [--fresh-db JDBC-URL --db-user U --db-password P]}:
     * the pid (0 when unknown) is the process whose CPU counts as the service's; the fresh database,
     * when the script made one for the service, is analyzed after each warm-up.
     */
    static void run(Settings settings, Args args) throws Exception {
        URI url = URI.create(args.get("url"));
        String name = args.get("name");
        String freshDb = args.get("fresh-db", "");
        JsonObject result = new JsonObject().put("name", name).put("url", url.toString())
                .put("startedByBench", "bench".equals(args.get("started")))
                .put("freshDatabase", freshDb.isEmpty() ? null : freshDb)
                .put("servicePid", args.number("pid", 0))
                .put("warmupCallbacksSeconds", settings.peerWarmupCallbacks())
                .put("warmupKeysSeconds", settings.peerWarmupKeys())
                .put("loadLoops", settings.loadLoops()).put("loadMaxLoops", settings.loadMaxLoops());
        Proc proc = new Proc(args.number("pid", 0), settings.clockTicks());
        int port = url.getPort() > 0 ? url.getPort() : 80;
        try (Load load = new Load(url.getHost(), port, proc, settings.loadMaxLoops())) {
            Compare compare = new Compare(settings, load, proc, new Ops(args.get("secret", settings.secret())),
                    "bench-" + args.get("run") + "-" + name);
            String asked = args.get("kinds");
            List<String> kinds = "auto".equals(asked) ? compare.probe() : List.of(asked.split("\\+"));
            result.put("kinds", new JsonArray(new ArrayList<>(kinds))).put("kindsDetected", "auto".equals(asked));
            Runnable analyze = () -> {
                if (!freshDb.isEmpty()) {
                    Db.analyzeAll(freshDb, args.get("db-user"), args.get("db-password"), "the warm-up");
                }
            };
            if (kinds.contains("callbacks")) {
                compare.callbacks(result, analyze);
            }
            if (kinds.contains("keys")) {
                compare.keys(result, analyze);
            }
            result.put("rssMaxKb", proc.takeRssMaxKb());
        } catch (Exception e) {
            // what was measured before still goes to the report, beside what went wrong
            result.put("error", String.valueOf(e.getMessage()));
            throw e;
        } finally {
            proc.close();
            Files.writeString(Path.of(args.get("out")), result.encodePrettily());
        }
    }

    /**
     * What the service serves, asked once: a callback without a signature answered 401 means it
     * checks signed callbacks (one it does not serve answers 404); a key submitted twice answered
     * 201 and then the stored 201 with {@code Idempotent-Replayed: true} and the same order means it
     * serves Idempotency-Key submits as idem's contract has them. The probe's order stays behind.
     */
    private List<String> probe() throws Exception {
        WebClient client = load.client(1);
        try {
            List<String> kinds = new ArrayList<>();
            HttpResponse<Buffer> unsigned = await(client.post("/api/payments/callback")
                    .putHeader("Content-Type", "application/json").sendBuffer(Buffer.buffer("{}")));
            if (unsigned.statusCode() == 401) {
                kinds.add("callbacks");
            }
            HttpResponse<Buffer> first = await(Ops.submit(client, user + "-probe", 0));
            HttpResponse<Buffer> again = await(Ops.submit(client, user + "-probe", 0));
            if (first.statusCode() == 201 && again.statusCode() == 201
                    && "true".equals(again.getHeader("Idempotent-Replayed")) && sameOrder(first, again)) {
                kinds.add("keys");
            }
            Progress.say("detected: it serves " + (kinds.isEmpty() ? "neither signed callbacks nor Idempotency-Key"
                    + " replays" : String.join(" and ", kinds)) + " (unsigned callback: " + unsigned.statusCode()
                    + "; a key twice: " + first.statusCode() + ", then " + again.statusCode() + " replayed "
                    + again.getHeader("Idempotent-Replayed") + ")");
            return kinds;
        } finally {
            client.close();
        }
    }

    private static boolean sameOrder(HttpResponse<Buffer> a, HttpResponse<Buffer> b) {
        try {
            return Ops.orderId(a).equals(Ops.orderId(b));
        } catch (RuntimeException notJson) {
            return false;
        }
    }

    private static <T> T await(Future<T> future) throws Exception {
        return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    /** Warm-up, then first deliveries at each concurrency, then duplicates of them at each. */
    private void callbacks(JsonObject result, Runnable analyze) {
        Progress.say("callbacks: warm-up of " + settings.peerWarmupCallbacks()
                + " s (orders, their callbacks, duplicates), not counted");
        Ops.Pool warm = new Ops.Pool(user + "-wc");
        double round = round(settings.peerWarmupCallbacks());
        double[] rates = warmUp(settings.peerWarmupCallbacks(), List.of(
                new Warm("orders", round, () -> ops.createOrders(warm, -1)),
                new Warm("callbacks", Double.MAX_VALUE, () -> ops.firstDeliveries(warm, null)),
                new Warm("duplicates", round / 2, () -> ops.duplicates(warm))));
        analyze.run();
        checkAlive();

        Progress.say("first-delivery callbacks: one signed SUCCESS per fresh WAIT_PAY order, at c = "
                + concurrencies());
        Ops.Pool pool = new Ops.Pool(user + "-c");
        // the orders a step may pay: three times what the fastest callbacks/s seen so far would use,
        // since a step has up to four times the concurrency of the one before it
        double[] fastest = {Math.max(rates[1], 100)};
        result.put("callbacksFirst", steps("callbacks first", c -> {
            long need = (long) Math.ceil(fastest[0] * settings.seconds() * 3) + c;
            if (pool.unpaid() < need) {
                load.closed("(new orders)", TOP_UP_CONCURRENCY, 300,
                        ops.createOrders(pool, (int) (pool.nextKey + need - pool.unpaid())));
            }
            Load.Step step = load.closed("callbacks first", c, settings.seconds(), ops.firstDeliveries(pool, null));
            fastest[0] = Math.max(fastest[0], step.rate());
            return step;
        }));
        result.put("paidOrders", pool.paid);
        checkAlive();

        Progress.say("duplicate deliveries: the callbacks of the " + pool.paid + " paid orders again");
        result.put("duplicates", steps("duplicates",
                c -> load.closed("duplicates", c, settings.seconds(), ops.duplicates(pool))));
        checkAlive();
    }

    /** Warm-up, then first executions at each concurrency, then replays of those keys at each. */
    private void keys(JsonObject result, Runnable analyze) {
        Progress.say("Idempotency-Key: warm-up of " + settings.peerWarmupKeys() + " s (new keys, replays), not counted");
        Ops.Pool warm = new Ops.Pool(user + "-wk");
        double round = round(settings.peerWarmupKeys());
        warmUp(settings.peerWarmupKeys(), List.of(
                new Warm("key first", round, () -> ops.createOrders(warm, -1)),
                new Warm("key replays", round / 2, () -> ops.replayOrders(warm, warm.orders.size()))));
        analyze.run();
        checkAlive();

        Progress.say("Idempotency-Key first executions, then replays of the same keys, at c = " + concurrencies());
        Ops.Pool pool = new Ops.Pool(user + "-k");
        result.put("keyFirst", steps("key first",
                c -> load.closed("key first", c, settings.seconds(), ops.createOrders(pool, -1))));
        int keyed = pool.orders.size();
        result.put("keyReplay", steps("key replay",
                c -> load.closed("key replay", c, settings.seconds(), ops.replayOrders(pool, keyed))));
        checkAlive();
    }

    /** One kind of request in a warm-up round: at most {@code seconds}, its op made when its turn comes. */
    private record Warm(String name, double seconds, Supplier<Load.Op> op) {}

    /** A third of the warm-up, at most {@link #WARMUP_ROUND_SECONDS}: a short warm-up still takes turns. */
    private static double round(double warmup) {
        return Math.min(WARMUP_ROUND_SECONDS, Math.max(1, warmup / 3));
    }

    /**
     * Rounds of the given kinds of request, one after the other, until {@code seconds} have passed
     * (a kind whose supply runs dry, such as the callbacks of the orders made, ends early); answers
     * each kind's fastest rate.
     */
    private double[] warmUp(double seconds, List<Warm> round) {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        double[] fastest = new double[round.size()];
        while (System.nanoTime() < end) {
            for (int i = 0; i < round.size() && System.nanoTime() < end; i++) {
                Warm kind = round.get(i);
                double left = (end - System.nanoTime()) / 1e9;
                Load.Step step = load.closed("warm-up " + kind.name(), WARMUP_CONCURRENCY, Math.min(kind.seconds(), left),
                        kind.op().get());
                if (step.ok == 0 && !step.exhausted) {
                    throw new IllegalStateException("the service answered no warm-up " + kind.name() + ": " + step.failures);
                }
                fastest[i] = Math.max(fastest[i], step.rate());
            }
        }
        return fastest;
    }

    /** One step at each fixed concurrency; a kind the service does not serve stops at its first step. */
    private JsonObject steps(String name, IntFunction<Load.Step> step) {
        JsonArray steps = new JsonArray();
        for (int c : settings.peerConcurrency()) {
            Load.Step s = unbound(() -> step.apply(c));
            steps.add(s.toJson());
            if (s.ok == 0 || !proc.alive()) {
                break;
            }
        }
        return new JsonObject().put("name", name).put("steps", steps);
    }

    /**
     * Runs a step; while a thread of the load generator took more than {@link #SATURATED} of a core,
     * the load generator, not the service, was the cap: the step runs again with twice the event
     * loops (up to BENCH_LOAD_MAX_LOOPS) and the faster try is kept, with every try recorded in it.
     */
    private Load.Step unbound(Supplier<Load.Step> step) {
        JsonArray tries = new JsonArray();
        Load.Step best = null;
        for (int loops = settings.loadLoops(); ; loops *= 2) {
            load.loops(loops);
            Load.Step s = step.get();
            double busiest = s.cpu == null ? 0 : s.cpu.of(Proc.LOAD_BUSIEST_THREAD);
            tries.add(new JsonObject().put("loops", s.loops).put("perSecond", Load.round(s.rate(), 1))
                    .put("busiestThreadCores", Load.round(busiest, 2))
                    .put("loadGeneratorCores", Load.round(s.cpu == null ? 0 : s.cpu.of("loadGenerator"), 2)));
            if (best == null || s.rate() > best.rate()) {
                best = s;
            }
            if (busiest < SATURATED || s.ok == 0 || loops * 2 > settings.loadMaxLoops()) {
                break;
            }
            Progress.say(String.format("the load generator was the cap of %s c=%d (a thread of it at %.2f core with"
                    + " %d event loop(s)): once more with %d", s.name, s.concurrency, busiest, loops, loops * 2));
        }
        load.loops(settings.loadLoops());
        if (tries.size() > 1) {
            best.tries = tries;
        }
        return best;
    }

    private String concurrencies() {
        StringBuilder all = new StringBuilder();
        for (int c : settings.peerConcurrency()) {
            all.append(all.length() == 0 ? "" : ", ").append(c);
        }
        return all.toString();
    }

    private void checkAlive() {
        if (!proc.alive()) {
            throw new IllegalStateException("the service process is gone");
        }
    }
}
