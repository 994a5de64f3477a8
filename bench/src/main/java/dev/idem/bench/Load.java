package dev.idem.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * HTTP load from Vert.x event loops (BENCH_LOAD_LOOPS, one by default, so the service keeps the
 * other cores): a closed loop of {@code c} requests always in flight, or an open loop at a fixed
 * rate. The ops run on the one context they were started from (Vert.x answers a request on the
 * context that sent it), so they need no locking whatever the loops. Latencies in microseconds.
 */
final class Load implements AutoCloseable {

    /** One kind of request, run on the load's context only. */
    interface Op {
        /** Sends the next request: the future answers null when the answer was right, else what was wrong; null when the supply ran dry. */
        Future<String> next(WebClient client);
    }

    private static final long MAX_MICROS = TimeUnit.MINUTES.toMicros(10);

    private final Vertx vertx;
    private final io.vertx.core.Context context;
    private final String host;
    private final int port;
    private final Proc proc;
    private final int loops;
    private final Turns turns;

    Load(String host, int port, Proc proc, int loops) {
        this(host, port, proc, loops, Turns.SOLO);
    }

    /** A load whose steps take {@code turns} with another service's. */
    Load(String host, int port, Proc proc, int loops, Turns turns) {
        this.vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops).setWorkerPoolSize(2)
                .setInternalBlockingPoolSize(2).setPreferNativeTransport(false));
        this.context = vertx.getOrCreateContext();
        this.host = host;
        this.port = port;
        this.proc = proc;
        this.loops = loops;
        this.turns = turns;
    }

    WebClient client(int connections) {
        return WebClient.create(vertx, new WebClientOptions().setDefaultHost(host).setDefaultPort(port)
                .setPoolEventLoopSize(loops > 1 ? loops : 0).setKeepAlive(true).setMaxPoolSize(connections)
                .setMaxWaitQueueSize(-1).setConnectTimeout(5_000).setIdleTimeout(60).setUserAgentEnabled(false));
    }

    /** The figures of one measured step. */
    static final class Step {
        final String name;
        final int concurrency;
        final double targetRate;
        long ok;
        long failed;
        double seconds;
        boolean exhausted;
        final Histogram latency = new Histogram(MAX_MICROS, 3);
        final Map<String, Integer> failures = new LinkedHashMap<>();
        Proc.CpuUse cpu;

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
            JsonObject json = new JsonObject().put("name", name).put("concurrency", concurrency).put("ok", ok)
                    .put("failed", failed).put("seconds", round(seconds, 2)).put("perSecond", round(rate(), 1))
                    .put("p50Ms", round(ms(50), 2)).put("p90Ms", round(ms(90), 2)).put("p99Ms", round(ms(99), 2))
                    .put("maxMs", round(latency.getMaxValue() / 1000.0, 2)).put("exhausted", exhausted);
            if (targetRate > 0) {
                json.put("targetPerSecond", round(targetRate, 1));
            }
            if (cpu != null) {
                json.put("cores", cpu.toJson());
            }
            return failures.isEmpty() ? json : json.put("failures", new JsonObject(new LinkedHashMap<>(failures)));
        }

        String line() {
            return String.format("%-22s c=%-3d %9.1f/s  p50 %7.2f ms  p99 %7.2f ms  failed %d%s%s", name, concurrency,
                    rate(), ms(50), ms(99), failed, cpu == null ? "" : "  " + cpu.line(),
                    exhausted ? "  (supply exhausted)" : "");
        }

        /** Counts one answer, its latency from {@code t0} (nanoseconds). */
        void answered(io.vertx.core.AsyncResult<String> answer, long t0) {
            if (answer.succeeded() && answer.result() == null) {
                ok++;
                latency.recordValue(Math.min(MAX_MICROS, Math.max(1, (System.nanoTime() - t0) / 1000)));
                return;
            }
            failed++;
            String reason = answer.failed() ? String.valueOf(answer.cause()) : answer.result();
            if (failures.size() < 20 || failures.containsKey(reason)) {
                failures.merge(reason, 1, Integer::sum);
            }
        }
    }

    /** {@code c} requests in flight for {@code seconds}, or until the op runs dry. */
    Step closed(String name, int c, double seconds, Op op) {
        return measure(new Step(name, c, 0), c, (step, client, done) -> {
            long start = System.nanoTime();
            long deadline = start + (long) (seconds * 1e9);
            int[] active = {c};
            long[] last = {start};
            long timer = vertx.setPeriodic(1000, id -> Progress.line(String.format("%-22s c=%-3d %5.1fs  done %d  failed %d",
                    name, c, (System.nanoTime() - start) / 1e9, step.ok, step.failed)));
            Runnable[] fire = new Runnable[1];
            fire[0] = () -> {
                long t0 = System.nanoTime();
                boolean over = t0 >= deadline || (step.failed > 1000 && step.failed > step.ok);
                Future<String> sent = over ? null : op.next(client);
                if (sent != null) {
                    sent.onComplete(answer -> {
                        last[0] = System.nanoTime();
                        step.answered(answer, t0);
                        fire[0].run();
                    });
                    return;
                }
                step.exhausted |= !over;
                if (--active[0] == 0) {
                    vertx.cancelTimer(timer);
                    step.seconds = (last[0] - start) / 1e9;
                    done.complete(step);
                }
            };
            for (int i = 0; i < c; i++) {
                fire[0].run();
            }
        });
    }

    /**
     * An open loop: requests start at {@code rate} per second whatever the answers do (at most
     * {@code maxInFlight} outstanding), and latency counts from the intended start, so that a
     * stalled service shows in the figures instead of slowing the load down.
     */
    Step open(String name, double rate, double seconds, int maxInFlight, Op op) {
        return measure(new Step(name, maxInFlight, rate), maxInFlight, (step, client, done) -> {
            long start = System.nanoTime();
            long end = start + (long) (seconds * 1e9);
            long[] sent = {0};
            int[] inFlight = {0};
            boolean[] stopped = {false};
            vertx.setPeriodic(1, timer -> {
                long now = System.nanoTime();
                while (!stopped[0] && sent[0] < (now - start) / 1e9 * rate && inFlight[0] < maxInFlight) {
                    long intended = start + (long) (sent[0] * 1e9 / rate);
                    Future<String> answer = op.next(client);
                    if (answer == null) {
                        step.exhausted = true;
                        stopped[0] = true;
                        break;
                    }
                    sent[0]++;
                    inFlight[0]++;
                    answer.onComplete(a -> {
                        inFlight[0]--;
                        step.answered(a, intended);
                    });
                }
                stopped[0] |= now >= end;
                if (stopped[0] && inFlight[0] == 0) {
                    vertx.cancelTimer(timer);
                    step.seconds = (System.nanoTime() - start) / 1e9;
                    done.complete(step);
                }
            });
        });
    }

    private interface Driver {
        void start(Step step, WebClient client, CompletableFuture<Step> done);
    }

    private Step measure(Step step, int connections, Driver driver) {
        return turns.alone(() -> measureNow(step, connections, driver));
    }

    private Step measureNow(Step step, int connections, Driver driver) {
        WebClient client = client(connections);
        CompletableFuture<Step> done = new CompletableFuture<>();
        Proc.CpuSnapshot cpu = proc.cpu();
        context.runOnContext(ignored -> driver.start(step, client, done));
        try {
            done.get(30, TimeUnit.MINUTES);
        } catch (Exception e) {
            throw new IllegalStateException("load step did not finish", e);
        }
        step.cpu = proc.since(cpu);
        client.close();
        Progress.done(step.line());
        return step;
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
