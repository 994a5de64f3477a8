package dev.idem.bench;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/** What {@code /proc} says about the service process (its RSS, who uses the cores) and the machine. */
final class Proc {

    private static final long SELF = ProcessHandle.current().pid();
    /** Who uses the cores; serviceJit is the part of the service's CPU its JIT compilers took. */
    static final String[] GROUPS = {"service", "serviceJit", "postgres", "redis", "kafka", "loadGenerator", "other"};

    /** The service's pid; 0 when it is not known (a comparison service on another machine). */
    private final long pid;
    private final int clockTicks;
    private final Map<Long, String> groups = new ConcurrentHashMap<>();
    private final AtomicLong rssMaxKb = new AtomicLong();
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rss-sampler");
        t.setDaemon(true);
        return t;
    });

    Proc(long pid, int clockTicks) {
        this.pid = pid;
        this.clockTicks = clockTicks;
        sampler.scheduleAtFixedRate(() -> rssMaxKb.accumulateAndGet(rssKb(), Math::max), 0, 250, TimeUnit.MILLISECONDS);
    }

    /** Whether the service still runs; always true when its pid is not known. */
    boolean alive() {
        return pid <= 0 || Files.exists(Path.of("/proc/" + pid + "/status"));
    }

    void checkAlive() {
        if (!alive()) {
            throw new IllegalStateException("the service process is gone");
        }
    }

    /** VmRSS in kB, or 0 when the process is gone or unknown. */
    long rssKb() {
        try (Stream<String> lines = Files.lines(Path.of("/proc/" + pid + "/status"))) {
            return lines.filter(l -> l.startsWith("VmRSS:")).mapToLong(l -> Long.parseLong(l.replaceAll("[^0-9]", "")))
                    .findFirst().orElse(0);
        } catch (IOException | RuntimeException gone) {
            return 0;
        }
    }

    /** The largest RSS seen since the last call, then starts over. */
    long takeRssMaxKb() {
        return rssMaxKb.getAndSet(rssKb());
    }

    void close() {
        sampler.shutdownNow();
    }

    /** CPU seconds of every process (and of the service's JIT threads, as -1) and the machine's counters, at one instant. */
    record CpuSnapshot(long nanos, Map<Long, Double> seconds, long machineBusy, long machineTotal) {}

    /** Cores used over an interval by each group, and how busy the whole machine was. */
    record CpuUse(Map<String, Double> cores, double machineBusyPercent) {
        double of(String group) {
            return cores.getOrDefault(group, 0.0);
        }

        JsonObject toJson() {
            JsonObject json = new JsonObject();
            for (String group : GROUPS) {
                json.put(group, Load.round(of(group), 2));
            }
            return json.put("machineBusyPercent", Load.round(machineBusyPercent, 1));
        }

        String line() {
            return String.format(Locale.ROOT, "cpu: service %.2f (jit %.2f), pg %.2f, redis %.2f, kafka %.2f, load %.2f,"
                    + " other %.2f (%.0f%%)", of("service"), of("serviceJit"), of("postgres"), of("redis"), of("kafka"),
                    of("loadGenerator"), of("other"), machineBusyPercent);
        }
    }

    CpuSnapshot cpu() {
        long busy = 0;
        long total = 0;
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            for (int i = 1; i < f.length && i <= 8; i++) {
                total += Long.parseLong(f[i]);
                busy += i == 4 || i == 5 ? 0 : Long.parseLong(f[i]); // not idle, iowait
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux: no machine figure
        }
        Map<Long, Double> seconds = new HashMap<>();
        try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
            processes.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                try {
                    long id = Long.parseLong(p.getFileName().toString());
                    String[] stat = stat(p);
                    groups.computeIfAbsent(id, ignored -> group(id, stat[0], p));
                    seconds.put(id, Double.parseDouble(stat[1]));
                } catch (IOException | RuntimeException gone) {
                    // the process ended meanwhile
                }
            });
        } catch (IOException ignored) {
            // no /proc
        }
        if (pid > 0) {
            try (Stream<Path> threads = Files.list(Path.of("/proc/" + pid + "/task"))) {
                seconds.put(-1L, threads.mapToDouble(t -> {
                    try {
                        String[] stat = stat(t);
                        return stat[0].startsWith("C1 Compiler") || stat[0].startsWith("C2 Compiler")
                                ? Double.parseDouble(stat[1]) : 0;
                    } catch (IOException | RuntimeException gone) {
                        return 0;
                    }
                }).sum());
            } catch (IOException | RuntimeException gone) {
                // the service ended
            }
        }
        return new CpuSnapshot(System.nanoTime(), seconds, busy, total);
    }

    CpuUse since(CpuSnapshot before) {
        CpuSnapshot now = cpu();
        double wall = (now.nanos() - before.nanos()) / 1e9;
        long total = now.machineTotal() - before.machineTotal();
        // per process: one that started meanwhile counts whole, one that ended meanwhile is lost
        Map<String, Double> cores = new HashMap<>();
        now.seconds().forEach((id, s) -> cores.merge(id == -1 ? "serviceJit" : groups.getOrDefault(id, "other"),
                Math.max(0, s - before.seconds().getOrDefault(id, 0.0)) / wall, Double::sum));
        return new CpuUse(cores, total == 0 ? 0 : 100.0 * (now.machineBusy() - before.machineBusy()) / total);
    }

    /** A process's or thread's name and CPU seconds (user + system), from its {@code stat} file. */
    private String[] stat(Path processOrThread) throws IOException {
        String stat = Files.readString(processOrThread.resolve("stat"));
        int close = stat.lastIndexOf(')');
        // the command name may hold spaces: fields count from the closing parenthesis
        String[] f = stat.substring(close + 2).trim().split("\\s+");
        return new String[] {stat.substring(stat.indexOf('(') + 1, close),
            Double.toString((Long.parseLong(f[11]) + Long.parseLong(f[12])) / (double) clockTicks)};
    }

    private String group(long id, String comm, Path process) {
        if (id == pid || id == SELF) {
            return id == pid ? "service" : "loadGenerator";
        }
        if (comm.startsWith("postgres") || comm.equals("postmaster") || comm.startsWith("redis-server")) {
            return comm.startsWith("redis") ? "redis" : "postgres";
        }
        try {
            return Files.readString(process.resolve("cmdline")).contains("kafka.Kafka") ? "kafka" : "other";
        } catch (IOException | RuntimeException gone) {
            return "other";
        }
    }
}
