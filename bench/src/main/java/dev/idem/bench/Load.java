package dev.idem.bench;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * HTTP load on one Vert.x event loop (one core at most, so the service keeps the rest): a closed
 * loop of {@code c} requests always in flight, or an open loop at a fixed rate. Latencies go into
 * an HdrHistogram in microseconds.
 *
 * <p>With {@link #loops(int)} above one, the connections are spread over that many event loops,
 * which then do the sockets and the HTTP codec, while the ops still run on the one loop they were
 * called from (Vert.x answers a request on the context that sent it): so the ops need no locking
 * whatever the loops, and a load generator whose single loop was the cap can go further.
 */
final class Load implements AutoCloseable {

    /** One kind of request. Runs on the load's event loop only, so it needs no locking. */
    interface Op {
        /**
         * Sends the next request; the future answers null for the expected answer, else what was
         * wrong with it. Null instead of a future when the supply (fresh orders, say) is exhausted.
         */
        Future<String> next(WebClient client);
    }

    private static final long MAX_MICROS = TimeUnit.MINUTES.toMicros(10);

    private final Vertx vertx;
    private final Context context;
    private final String host;
    private final int port;
    private final Proc proc;
    private final int maxLoops;
    private int loops = 1;

    Load(int port, Proc proc) {
        this("127.0.0.1", port, proc, 1);
    }

    /** Load on {@code host:port}, able to use up to {@code maxLoops} event loops. */
    Load(String host, int port, Proc proc, int maxLoops) {
        this.vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(maxLoops).setWorkerPoolSize(2)
                .setInternalBlockingPoolSize(2).setPreferNativeTransport(false));
        this.context = vertx.getOrCreateContext();
        this.host = host;
        this.port = port;
        this.proc = proc;
        this.maxLoops = maxLoops;
    }

    /** The event loops the next steps' connections use (1 to the {@code maxLoops} given). */
    void loops(int loops) {
        this.loops = Math.max(1, Math.min(loops, maxLoops));
    }

    WebClient client(int connections) {
        return WebClient.create(vertx, new WebClientOptions()
                .setDefaultHost(host)
                .setDefaultPort(port)
                // 0: the calling loop itself, as with one loop
                .setPoolEventLoopSize(loops > 1 ? loops : 0)
                .setKeepAlive(true)
                .setPipelining(false)
                .setMaxPoolSize(connections)
                .setMaxWaitQueueSize(-1)
                .setConnectTimeout(5_000)
                .setIdleTimeout(60)
                .setUserAgentEnabled(false)
                .setFollowRedirects(false));
    }

    /** The figures of one measured step. */
    static final class Step {
        final String name;
        final int concurrency;
        final double targetRate;
        // wall-clock start, to line a step up with a profile or a server log taken meanwhile
        final Instant startedAt = Instant.now();
        long ok;
        long failed;
        double seconds;
        boolean exhausted;
        final Histogram latency = new Histogram(MAX_MICROS, 3);
        final Map<String, Integer> failures = new LinkedHashMap<>();
        Proc.CpuUse cpu;
        int loops = 1;
        // the tries of a step run again with more event loops (Compare), or null
        JsonArray tries;

        Step(String name, int concurrency, double targetRate) {
            this.name = name;
            this.concurrency = concurrency;
            this.targetRate = targetRate;
        }

        double rate() {
            return seconds <= 0 ? 0 : ok / seconds;
        }

        /** The cores the service's JIT compilers took during this step. */
        double jit() {
            return cpu == null ? 0 : cpu.of("serviceJit");
        }

        double ms(double percentile) {
            return latency.getTotalCount() == 0 ? 0 : latency.getValueAtPercentile(percentile) / 1000.0;
        }

        JsonObject toJson() {
            JsonObject json = new JsonObject()
                    .put("name", name)
                    .put("concurrency", concurrency)
                    .put("startedAt", startedAt.toString())
                    .put("ok", ok)
                    .put("failed", failed)
                    .put("seconds", round(seconds, 2))
                    .put("perSecond", round(rate(), 1))
                    .put("p50Ms", round(ms(50), 2))
                    .put("p90Ms", round(ms(90), 2))
                    .put("p99Ms", round(ms(99), 2))
                    .put("maxMs", round(latency.getMaxValue() / 1000.0, 2))
                    .put("exhausted", exhausted);
            if (targetRate > 0) {
                json.put("targetPerSecond", round(targetRate, 1));
            }
            if (cpu != null) {
                json.put("cores", cpu.toJson());
            }
            json.put("loadLoops", loops);
            if (tries != null) {
                json.put("loadTries", tries);
            }
            if (!failures.isEmpty()) {
                JsonObject f = new JsonObject();
                failures.forEach(f::put);
                json.put("failures", f);
            }
            return json;
        }

        String line() {
            return String.format("%-22s c=%-3d %9.1f/s  p50 %7.2f ms  p99 %7.2f ms  failed %d%s%s%s", name, concurrency,
                    rate(), ms(50), ms(99), failed,
                    loops > 1 ? "  " + loops + " loops" : "",
                    cpu == null ? "" : "  " + cpu.line(),
                    exhausted ? "  (supply exhausted)" : "");
        }

        void fail(String reason) {
            failed++;
            if (failures.size() < 20 || failures.containsKey(reason)) {
                failures.merge(reason, 1, Integer::sum);
            }
        }
    }

    /** {@code c} requests in flight for {@code seconds}, or until the op runs dry. */
    Step closed(String name, int c, double seconds, Op op) {
        Step step = new Step(name, c, 0);
        step.loops = loops;
        WebClient client = client(c);
        CompletableFuture<Step> done = new CompletableFuture<>();
        Proc.CpuSnapshot cpu = proc.cpu();
        context.runOnContext(ignored -> new Closed(step, client, op, c, seconds, done).start());
        Step result = join(done);
        result.cpu = proc.since(cpu);
        client.close();
        Progress.done(result.line());
        return result;
    }

    private final class Closed {
        private final Step step;
        private final WebClient client;
        private final Op op;
        private final int c;
        private final long start = System.nanoTime();
        private final long deadline;
        private final CompletableFuture<Step> done;
        private int active;
        private long last = start;
        private long timer;
        private long shownOk;
        private long shownAt = start;

        Closed(Step step, WebClient client, Op op, int c, double seconds, CompletableFuture<Step> done) {
            this.step = step;
            this.client = client;
            this.op = op;
            this.c = c;
            this.deadline = start + (long) (seconds * 1e9);
            this.done = done;
        }

        void start() {
            timer = vertx.setPeriodic(1000, id -> show());
            for (int i = 0; i < c; i++) {
                active++;
                fire();
            }
        }

        private void fire() {
            long t0 = System.nanoTime();
            if (t0 >= deadline || tooManyFailures()) {
                finish();
                return;
            }
            Future<String> sent;
            try {
                sent = op.next(client);
            } catch (RuntimeException e) {
                step.fail("client: " + e);
                finish();
                return;
            }
            if (sent == null) {
                step.exhausted = true;
                finish();
                return;
            }
            sent.onComplete(answer -> {
                long t1 = System.nanoTime();
                last = t1;
                if (answer.failed()) {
                    step.fail(String.valueOf(answer.cause()));
                } else if (answer.result() != null) {
                    step.fail(answer.result());
                } else {
                    step.ok++;
                    step.latency.recordValue(Math.min(MAX_MICROS, Math.max(1, (t1 - t0) / 1000)));
                }
                fire();
            });
        }

        private boolean tooManyFailures() {
            return step.failed > 1000 && step.failed > step.ok;
        }

        private void show() {
            long now = System.nanoTime();
            double rate = (step.ok - shownOk) / ((now - shownAt) / 1e9);
            shownOk = step.ok;
            shownAt = now;
            Progress.line(String.format("%-22s c=%-3d %5.1fs  %9.1f/s  done %d  failed %d", step.name, c,
                    (now - start) / 1e9, rate, step.ok, step.failed));
        }

        private void finish() {
            if (--active == 0) {
                vertx.cancelTimer(timer);
                step.seconds = (last - start) / 1e9;
                done.complete(step);
            }
        }
    }

    /**
     * An open loop: requests start at {@code rate} per second whatever the answers do (at most
     * {@code maxInFlight} outstanding). Latency counts from the intended start, so a stalled
     * service shows up in the figures instead of slowing the load down.
     */
    Step open(String name, double rate, double seconds, int maxInFlight, Op op) {
        Step step = new Step(name, maxInFlight, rate);
        step.loops = loops;
        WebClient client = client(maxInFlight);
        CompletableFuture<Step> done = new CompletableFuture<>();
        Proc.CpuSnapshot cpu = proc.cpu();
        context.runOnContext(ignored -> new Open(step, client, op, rate, seconds, maxInFlight, done).start());
        Step result = join(done);
        result.cpu = proc.since(cpu);
        client.close();
        Progress.done(result.line());
        return result;
    }

    private final class Open {
        private final Step step;
        private final WebClient client;
        private final Op op;
        private final double rate;
        private final int maxInFlight;
        private final long start = System.nanoTime();
        private final long end;
        private final CompletableFuture<Step> done;
        private long sent;
        private int inFlight;
        private boolean stopped;
        private long timer;
        private long progress;
        private long last = start;

        Open(Step step, WebClient client, Op op, double rate, double seconds, int maxInFlight,
             CompletableFuture<Step> done) {
            this.step = step;
            this.client = client;
            this.op = op;
            this.rate = rate;
            this.maxInFlight = maxInFlight;
            this.end = start + (long) (seconds * 1e9);
            this.done = done;
        }

        void start() {
            timer = vertx.setPeriodic(1, id -> tick());
            progress = vertx.setPeriodic(1000, id -> Progress.line(String.format(
                    "%-22s %7.1f/s target  %5.1fs  sent %d  done %d  in flight %d  failed %d", step.name, rate,
                    (System.nanoTime() - start) / 1e9, sent, step.ok, inFlight, step.failed)));
        }

        private void tick() {
            long now = System.nanoTime();
            if (now >= end || stopped) {
                stop();
                return;
            }
            long due = (long) ((now - start) / 1e9 * rate);
            while (sent < due && inFlight < maxInFlight) {
                long intended = start + (long) (sent * 1e9 / rate);
                Future<String> answer = op.next(client);
                if (answer == null) {
                    step.exhausted = true;
                    stop();
                    return;
                }
                sent++;
                inFlight++;
                answer.onComplete(a -> {
                    long t1 = System.nanoTime();
                    last = t1;
                    inFlight--;
                    if (a.failed()) {
                        step.fail(String.valueOf(a.cause()));
                    } else if (a.result() != null) {
                        step.fail(a.result());
                    } else {
                        step.ok++;
                        step.latency.recordValue(Math.min(MAX_MICROS, Math.max(1, (t1 - intended) / 1000)));
                    }
                    if (stopped && inFlight == 0) {
                        complete();
                    }
                });
            }
        }

        private void stop() {
            if (!stopped) {
                stopped = true;
                vertx.cancelTimer(timer);
                vertx.cancelTimer(progress);
            }
            if (inFlight == 0) {
                complete();
            }
        }

        private void complete() {
            if (!done.isDone()) {
                step.seconds = (last - start) / 1e9;
                done.complete(step);
            }
        }
    }

    private static Step join(CompletableFuture<Step> done) {
        try {
            return done.get(30, TimeUnit.MINUTES);
        } catch (Exception e) {
            throw new IllegalStateException("load step did not finish", e);
        }
    }

    static double round(double value, int digits) {
        double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }

    @Override
    public void close() {
        vertx.close().toCompletionStage().toCompletableFuture().orTimeout(10, TimeUnit.SECONDS).exceptionally(e -> null)
                .join();
    }
}
