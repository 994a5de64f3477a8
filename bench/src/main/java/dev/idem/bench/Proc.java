package dev.idem.bench;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
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

/** What {@code /proc} says about the service process and the machine. */
final class Proc {

    private static final long SELF = ProcessHandle.current().pid();

    /** The service's pid; 0 when it is not known (a comparison service on another machine). */
    private final long pid;
    private final Map<Long, String> groups = new ConcurrentHashMap<>();
    private final int clockTicks;
    private final AtomicLong rssMaxKb = new AtomicLong();
    private final ScheduledExecutorService sampler;

    Proc(long pid, int clockTicks) {
        this.pid = pid;
        this.clockTicks = clockTicks;
        this.sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rss-sampler");
            t.setDaemon(true);
            return t;
        });
        sampler.scheduleAtFixedRate(() -> rssMaxKb.accumulateAndGet(rssKb(), Math::max), 0, 250, TimeUnit.MILLISECONDS);
    }

    /** Whether the service still runs; always true when its pid is not known. */
    boolean alive() {
        return pid <= 0 || Files.exists(Path.of("/proc/" + pid + "/status"));
    }

    /** VmRSS in kB, or 0 when the process is gone. */
    long rssKb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | RuntimeException gone) {
            // the process ended
        }
        return 0;
    }

    /** The largest RSS seen since the last call, then starts over. */
    long takeRssMaxKb() {
        return rssMaxKb.getAndSet(rssKb());
    }

    void close() {
        sampler.shutdownNow();
    }

    /** Who uses the cores: the groups CPU time is split into. */
    static final String[] GROUPS = {"service", "postgres", "redis", "kafka", "loadGenerator", "other"};

    /**
     * The service's own threads that do no request work: the JIT compilers, and the garbage
     * collector with the VM thread (safepoints; the serial collector runs there). Their share
     * tells whether a step measured a warm service.
     */
    static final String[] SERVICE_PARTS = {"serviceJit", "serviceGc"};

    /**
     * The load generator's busiest thread, in cores: an event loop near 1.00 is what caps the load,
     * whatever the process's total says.
     */
    static final String LOAD_BUSIEST_THREAD = "loadGeneratorBusiestThread";

    /** CPU time counters at one instant, to be subtracted from a later snapshot. */
    record CpuSnapshot(long nanos, Map<Long, Double> seconds, Map<String, Double> serviceParts,
                       Map<Long, Double> loadThreads, long machineBusy, long machineTotal) {}

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
            for (String part : SERVICE_PARTS) {
                json.put(part, Load.round(of(part), 2));
            }
            json.put(LOAD_BUSIEST_THREAD, Load.round(of(LOAD_BUSIEST_THREAD), 2));
            return json.put("machineBusyPercent", Load.round(machineBusyPercent, 1));
        }

        String line() {
            return String.format(Locale.ROOT,
                    "cpu: service %.2f (jit %.2f, gc %.2f), pg %.2f, redis %.2f, kafka %.2f, load %.2f (busiest"
                            + " thread %.2f), other %.2f (%.0f%%)",
                    of("service"), of("serviceJit"), of("serviceGc"), of("postgres"), of("redis"), of("kafka"),
                    of("loadGenerator"), of(LOAD_BUSIEST_THREAD), of("other"), machineBusyPercent);
        }
    }

    /** Every process's CPU time from /proc, and the machine's own counters. */
    CpuSnapshot cpu() {
        long busy = 0;
        long total = 0;
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            for (int i = 1; i < f.length && i <= 8; i++) {
                long v = Long.parseLong(f[i]);
                total += v;
                if (i != 4 && i != 5) { // idle, iowait
                    busy += v;
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux: no machine figure
        }
        Map<Long, Double> seconds = new HashMap<>();
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(Path.of("/proc"),
                p -> p.getFileName().toString().chars().allMatch(Character::isDigit))) {
            for (Path process : processes) {
                try {
                    Stat stat = stat(process);
                    long id = Long.parseLong(process.getFileName().toString());
                    group(id, stat.comm(), process);
                    seconds.put(id, stat.cpuSeconds());
                } catch (IOException | RuntimeException gone) {
                    // the process ended meanwhile
                }
            }
        } catch (IOException ignored) {
            // no /proc
        }
        Map<Long, Double> loadThreads = new HashMap<>();
        threads(SELF).forEach((tid, stat) -> loadThreads.put(tid, stat.cpuSeconds()));
        return new CpuSnapshot(System.nanoTime(), seconds, serviceParts(), loadThreads, busy, total);
    }

    /** CPU seconds of the service's JIT and GC threads. */
    private Map<String, Double> serviceParts() {
        Map<String, Double> parts = new HashMap<>();
        threads(pid).values().forEach(stat -> {
            String comm = stat.comm();
            String part = comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler") ? "serviceJit"
                    : comm.startsWith("GC Thread") || comm.startsWith("G1 ") || comm.equals("VM Thread")
                    ? "serviceGc" : null;
            if (part != null) {
                parts.merge(part, stat.cpuSeconds(), Double::sum);
            }
        });
        return parts;
    }

    /** The threads of a process by thread id, from /proc/<pid>/task; none when it is gone or unknown. */
    private Map<Long, Stat> threads(long process) {
        Map<Long, Stat> threads = new HashMap<>();
        if (process <= 0) {
            return threads;
        }
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/" + process + "/task"))) {
            for (Path thread : tasks) {
                try {
                    threads.put(Long.parseLong(thread.getFileName().toString()), stat(thread));
                } catch (IOException | RuntimeException gone) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException | RuntimeException gone) {
            // the process ended, or no /proc
        }
        return threads;
    }

    /** A process's or thread's name and CPU time (user + system), from its {@code stat} file. */
    private record Stat(String comm, double cpuSeconds) {}

    private Stat stat(Path processOrThread) throws IOException {
        String stat = Files.readString(processOrThread.resolve("stat"));
        int close = stat.lastIndexOf(')');
        // the command name may hold spaces: fields count from the closing parenthesis
        String[] f = stat.substring(close + 2).trim().split("\\s+");
        return new Stat(stat.substring(stat.indexOf('(') + 1, close),
                (Long.parseLong(f[11]) + Long.parseLong(f[12])) / (double) clockTicks);
    }

    CpuUse since(CpuSnapshot before) {
        CpuSnapshot now = cpu();
        double wall = (now.nanos() - before.nanos()) / 1e9;
        long total = now.machineTotal() - before.machineTotal();
        // per process: one that started meanwhile counts whole, one that ended meanwhile is lost
        Map<String, Double> cores = new HashMap<>();
        now.seconds().forEach((id, s) -> cores.merge(groups.getOrDefault(id, "other"),
                Math.max(0, s - before.seconds().getOrDefault(id, 0.0)) / wall, Double::sum));
        now.serviceParts().forEach((part, s) ->
                cores.put(part, Math.max(0, s - before.serviceParts().getOrDefault(part, 0.0)) / wall));
        now.loadThreads().forEach((tid, s) -> cores.merge(LOAD_BUSIEST_THREAD,
                Math.max(0, s - before.loadThreads().getOrDefault(tid, 0.0)) / wall, Math::max));
        return new CpuUse(cores, total == 0 ? 0 : 100.0 * (now.machineBusy() - before.machineBusy()) / total);
    }

    private String group(long id, String comm, Path process) {
        return groups.computeIfAbsent(id, ignored -> {
            if (id == pid) {
                return "service";
            }
            if (id == SELF) {
                return "loadGenerator";
            }
            if (comm.startsWith("postgres") || comm.equals("postmaster")) {
                return "postgres";
            }
            if (comm.startsWith("redis-server")) {
                return "redis";
            }
            try {
                String cmdline = new String(Files.readAllBytes(process.resolve("cmdline")), StandardCharsets.UTF_8);
                if (cmdline.contains("kafka.Kafka")) {
                    return "kafka";
                }
            } catch (IOException | RuntimeException gone) {
                // ended
            }
            return "other";
        });
    }
}
