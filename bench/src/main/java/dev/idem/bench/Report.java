package dev.idem.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Merges the parts of one run into one JSON document and prints the table with its ratios. */
final class Report {

    private static final String[] PARTS = {"meta", "startup", "pgbench", "redis", "http", "kafka-pipeline",
        "kafka-bare", "latency-light", "latency", "latency-dear", "native-http", "ha-sync-http", "ha-async-http", "tracing"};
    private static final String[] RAMPS = {"keyFirst", "callbacksFirst", "duplicates", "bare", "keyReplay"};
    /** Part tracing's configurations: name and label. */
    private static final String[][] TRACING = {{"off", "tracing off (no exporter)"},
        {"all", "every delivery sampled (ratio 1.0)"}, {"1pct", "1 % sampled (ratio 0.01)"}};

    private final JsonObject all;
    private final StringBuilder out = new StringBuilder();

    private Report(JsonObject all) {
        this.all = all;
    }

    static void run(Args args) throws IOException {
        Path dir = Path.of(args.get("dir"));
        JsonObject all = new JsonObject();
        for (String part : PARTS) {
            Path file = dir.resolve(part + ".json");
            if (Files.exists(file)) {
                all.put(part, new JsonObject(Files.readString(file)));
            }
        }
        for (String commits : Comparison.COMMITS) {
            JsonObject comparison = Comparison.load(dir, commits);
            if (comparison != null) {
                all.put(comparisonOf(commits), comparison);
            }
        }
        Report report = new Report(all);
        all.put("ratios", report.ratios());
        String table = report.table();
        String json = all.put("table", table).encodePrettily();
        Files.writeString(Path.of(args.get("out")), json);
        Files.writeString(Path.of(args.get("latest")), json);
        Files.writeString(Path.of(args.get("table")), table);
        Files.writeString(Path.of(args.get("latest")).resolveSibling("latest.md"), table);
        System.out.print(table);
    }

    private JsonObject ratios() {
        JsonObject http = obj(all, "http");
        JsonObject nat = obj(all, "native-http");
        JsonObject sync = obj(all, "ha-sync-http");
        JsonObject async = obj(all, "ha-async-http");
        JsonObject ratios = new JsonObject()
                .put("firstDeliveryOverPgbench", ratio(peak(http, "callbacksFirst"), num(all, "pgbench", "tps"), 0.6))
                .put("duplicatesOverBare", ratio(peak(http, "duplicates"), peak(http, "bare"), 0.8))
                .put("duplicatesOverBareByConcurrency", inStep(http, "duplicates", "bare"))
                .put("grantsWithOverWithout", ratio(num(obj(all, "kafka-pipeline"), "measured", "perSecond"),
                        num(obj(all, "kafka-bare"), "measured", "perSecond"), 0.85))
                .put("nativeOverJarFirstDeliveries", ratio(peak(nat, "callbacksFirst"), peak(http, "callbacksFirst"), 0.8))
                .put("nativeOverJarDuplicates", ratio(peak(nat, "duplicates"), peak(http, "duplicates"), 0.8))
                // the same stack's least endpoint, natively and on the JVM: what 0.8 is to be read against
                .put("nativeOverJarBare", ratio(peak(nat, "bare"), peak(http, "bare"), null))
                .put("nativeDuplicatesOverBare", ratio(peak(nat, "duplicates"), peak(nat, "bare"), null))
                // what a synchronous standby costs: against the single node, and against the same cluster without one
                .put("syncStandbyOverSingleNode", ratio(peak(sync, "callbacksFirst"), peak(http, "callbacksFirst"), null))
                .put("asyncStandbyOverSingleNode", ratio(peak(async, "callbacksFirst"), peak(http, "callbacksFirst"), null))
                .put("syncOverAsyncStandby", ratio(peak(sync, "callbacksFirst"), peak(async, "callbacksFirst"), null));
        for (String config : new String[] {"all", "1pct"}) {
            ratios.put("tracing-" + config + "OverOff", ratio(tracing(config, r -> r.getDouble("perSecond")),
                            tracing("off", r -> r.getDouble("perSecond")), null))
                    .put("tracing-" + config + "P99OverOff", ratio(tracing(config, r -> r.getDouble("p99Ms")),
                            tracing("off", r -> r.getDouble("p99Ms")), null))
                    .put("tracing-" + config + "CpuOverOff", ratio(tracing(config, Report::cpuMs),
                            tracing("off", Report::cpuMs), null));
        }
        for (String commits : Comparison.COMMITS) {
            JsonObject comparison = obj(all, comparisonOf(commits));
            ratios.put(peersOf(commits), comparison == null ? null : Comparison.ratios(comparison));
        }
        return ratios;
    }

    /** Where the comparison with {@code commits} is kept: "comparison", "comparisonDear". */
    private static String comparisonOf(String commits) {
        return "shipped".equals(commits) ? "comparison" : "comparison" + Character.toUpperCase(commits.charAt(0)) + commits.substring(1);
    }

    private static String peersOf(String commits) {
        return comparisonOf(commits).replace("comparison", "peers");
    }

    /** Two ramps run in step, at each concurrency both reached: a step the shared machine slowed shows here. */
    private static JsonArray inStep(JsonObject http, String over, String under) {
        JsonArray ratios = new JsonArray();
        JsonArray a = steps(http, over);
        JsonArray b = steps(http, under);
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            ratios.add(ratio(a.getJsonObject(i).getDouble("perSecond"), b.getJsonObject(i).getDouble("perSecond"), null)
                    .put("concurrency", a.getJsonObject(i).getInteger("concurrency")));
        }
        return ratios;
    }

    static JsonObject ratio(Double measured, Double limit, Double target) {
        JsonObject r = new JsonObject().put("numerator", measured).put("denominator", limit).put("target", target);
        return measured != null && limit != null && limit > 0 ? r.put("value", Load.round(measured / limit, 2)) : r;
    }

    private String table() {
        JsonObject meta = obj(all, "meta");
        line("idem bench " + str(meta, "run") + ": " + str(meta, "date") + ", " + str(meta, "cores") + " cores, "
                + str(meta, "memory") + ", load average at start " + str(meta, "loadAverageAtStart") + "; working tree "
                + str(meta, "commit") + ", service " + str(meta, "app"));
        if (meta != null && !meta.getString("busy", "").isBlank()) {
            line("NOTE: the machine was busy during this run (" + meta.getString("busy") + "); figures are noisy.");
        }
        if (Stream.of("pgbench", "redis", "http", "kafka-pipeline", "kafka-bare", "latency")
                .anyMatch(all::containsKey)) {
            figures(meta);
        }
        if (all.containsKey("native-http")) {
            nativeBesideJar();
        }
        if (all.containsKey("ha-sync-http") || all.containsKey("ha-async-http")) {
            JsonObject ratios = all.getJsonObject("ratios");
            line("");
            line("| Postgres with failover (through HAProxy) | first deliveries, peak | ÷ single node |");
            line("|---|---:|---:|");
            line("| single node (service A) | " + atPeak(obj(all, "http"), "callbacksFirst") + " | 1 |");
            line("| Patroni, a synchronous standby | " + atPeak(obj(all, "ha-sync-http"), "callbacksFirst") + " | "
                    + value(ratios, "syncStandbyOverSingleNode") + " |");
            line("| Patroni, asynchronous replication | " + atPeak(obj(all, "ha-async-http"), "callbacksFirst") + " | "
                    + value(ratios, "asyncStandbyOverSingleNode") + " |");
            line("| synchronous ÷ asynchronous, the same cluster | | " + value(ratios, "syncOverAsyncStandby") + " |");
        }
        if (all.containsKey("tracing")) {
            tracingBesideOff();
        }
        for (String commits : Comparison.COMMITS) {
            JsonObject comparison = obj(all, comparisonOf(commits));
            if (comparison != null) {
                Comparison.table(comparison, all.getJsonObject("ratios").getJsonObject(peersOf(commits)), this::line);
            }
        }
        return out.toString();
    }

    /** idem's own figures and the machine's limits, their ratios and the ramps. */
    private void figures(JsonObject meta) {
        line("");
        line("| figure | result | p50 | p99 | at | notes |");
        line("|---|---:|---:|---:|---|---|");
        JsonObject startup = obj(all, "startup");
        JsonObject a = obj(startup, "A");
        row("start-up, process start → /q/health/ready 200", a == null ? null : fmt(a.getDouble("readyMs") / 1000, 2) + " s",
                null, null, null, a == null ? "" : "Quarkus says started in " + str(a, "quarkusSeconds") + " s");
        JsonObject http = obj(all, "http");
        JsonObject first = obj(http, "callbacksFirst");
        ramp("first-delivery signed callbacks", "callbacksFirst", first == null ? "" : first.getValue("paidOrders")
                + " orders paid" + (first.getLong("redisDegraded", 0L) > 0 ? ", Redis skipped "
                + first.getLong("redisDegraded") + " times" : ""));
        JsonObject dup = obj(http, "duplicates");
        ramp("duplicate deliveries (Redis DONE path)", "duplicates", dup == null ? "" : dup.getLong("answeredByRedis", 0L)
                + " of " + dup.getLong("answeredByAnyLayer", 0L) + " answered by Redis alone");
        ramp("bare GET /bench/redis-get (one Redis GET)", "bare", "");
        ramp("Idempotency-Key first execution (POST /api/orders)", "keyFirst", "");
        ramp("Idempotency-Key replay (same key, same body)", "keyReplay", "");
        for (String variant : new String[] {"pipeline", "bare"}) {
            JsonObject k = obj(all, "kafka-" + variant);
            JsonObject m = obj(k, "measured");
            row("coupon grants via Kafka, pipeline " + ("bare".equals(variant) ? "off" : "on"),
                    m == null ? null : fmt(m.getDouble("perSecond"), 0) + "/s", null, null,
                    m == null ? null : m.getLong("messages") + " messages", m == null ? "" : m.getLong("coupons")
                            + " coupons; " + fmt(m.getDouble("perSecondWall"), 0) + "/s produce → last coupon"
                            + warmup(k) + "; " + cores(obj(m, "cores")));
        }
        latencyRow("callback → coupon latency, at half the first-delivery peak", "latency");
        latencyRow("callback → coupon latency, light load (a tenth of the first-delivery peak)", "latency-light");
        latencyRow("callback → coupon latency, at half the first-delivery peak, commits made dearer", "latency-dear");
        JsonObject pg = obj(all, "pgbench");
        row("pgbench: the callback's SQL in one transaction", pg == null ? null : fmt(pg.getDouble("tps"), 0) + " TPS",
                null, null, pg == null ? null : "-c " + pg.getValue("clients") + " -M prepared -T " + pg.getValue("seconds"),
                pg == null ? "" : "median of " + list(pg.getJsonArray("tpsRuns")) + " TPS");
        JsonObject redis = obj(all, "redis");
        row("redis-benchmark SET key:__rand_int__ v NX EX 60", redis == null ? null : fmt(redis.getDouble("rps"), 0) + "/s",
                redis == null ? null : fmt(redis.getDouble("p50Ms"), 2) + " ms",
                redis == null ? null : fmt(redis.getDouble("p99Ms"), 2) + " ms",
                redis == null ? null : redis.getValue("clients") + " clients", "");
        row("service RSS under load (max VmRSS)", http == null ? null : megabytes(http, "rssMaxKbDuringCallbacks"), null,
                null, "first-delivery callbacks", http == null ? "" : "max over the HTTP part "
                        + megabytes(http, "rssMaxKbOverall"));

        line("");
        line("| ratio | measured | target |");
        line("|---|---:|---:|");
        ratioRow("first-delivery callbacks/s ÷ pgbench TPS", "firstDeliveryOverPgbench");
        ratioRow("duplicate deliveries/s ÷ bare endpoint req/s", "duplicatesOverBare");
        ratioRow("grants/s with the pipeline ÷ without", "grantsWithOverWithout");
        String inStep = all.getJsonObject("ratios").getJsonArray("duplicatesOverBareByConcurrency").stream()
                .map(o -> "c=" + ((JsonObject) o).getInteger("concurrency") + ": " + value((JsonObject) o))
                .collect(Collectors.joining(" · "));
        if (!inStep.isEmpty()) {
            line("");
            line("Duplicates ÷ bare endpoint at each concurrency (each pair measured one after the other): " + inStep);
        }
        if (http == null) {
            return;
        }
        line("");
        line("Ramps (throughput/s and p99 ms at each concurrency; after three steps the ramp stops at the first that gains"
                + " less than " + str(meta, "stopGainPercent") + "% over the best before it" + warmup(http) + "):");
        line("");
        line("| ramp | steps |");
        line("|---|---|");
        for (String name : RAMPS) {
            if (obj(http, name) != null) {
                line("| " + obj(http, name).getString("name") + " | " + steps(http, name).stream().map(o -> {
                    JsonObject s = (JsonObject) o;
                    return "c=" + s.getInteger("concurrency") + ": " + fmt(s.getDouble("perSecond"), 0) + " ("
                            + fmt(s.getDouble("p99Ms"), 1) + ")" + (s.getLong("failed", 0L) > 0 ? " " + s.getLong("failed")
                            + " failed" : "");
                }).collect(Collectors.joining(" · ")) + " |");
            }
        }
    }

    private void latencyRow(String label, String part) {
        JsonObject latency = obj(all, part);
        if (latency == null) {
            row(label, null, null, null, null, "");
            return;
        }
        JsonObject cb = obj(latency, "callbacks");
        row(label, latency.getLong("coupons") + " of " + latency.getLong("expected") + " coupons",
                fmt(latency.getDouble("p50Ms"), 1) + " ms", fmt(latency.getDouble("p99Ms"), 1) + " ms",
                fmt(latency.getDouble("rate"), 0) + "/s sent (" + (cb == null ? "n/a" : fmt(cb.getDouble("perSecond"), 0))
                        + "/s answered)",
                "max " + fmt(latency.getDouble("maxMs"), 1) + " ms; the callbacks' own answers p50 "
                        + (cb == null ? "n/a" : fmt(cb.getDouble("p50Ms"), 1) + " / p99 " + fmt(cb.getDouble("p99Ms"), 1))
                        + " ms (open loop); coupons granted at " + fmt(latency.getDouble("grantsPerSecond"), 0) + "/s"
                        + warmup(latency));
    }

    private static String cores(JsonObject cores) {
        return cores == null ? "" : "cores: " + Stream.of(Proc.GROUPS)
                .map(g -> g + " " + fmt(cores.getDouble(g, 0.0), 2)).collect(Collectors.joining(", "));
    }

    private void ramp(String label, String name, String notes) {
        JsonObject peak = obj(obj(obj(all, "http"), name), "peak");
        if (peak == null) {
            row(label, null, null, null, null, notes);
            return;
        }
        String failed = peak.getLong("failed", 0L) > 0 ? peak.getLong("failed") + " failed; " : "";
        row(label, fmt(peak.getDouble("perSecond"), 0) + "/s", fmt(peak.getDouble("p50Ms"), 2) + " ms",
                fmt(peak.getDouble("p99Ms"), 2) + " ms", "c=" + peak.getInteger("concurrency"),
                failed + notes + (notes.isEmpty() ? "" : "; ") + cores(obj(peak, "cores")));
    }

    /** "; warm-up rounds N" where the part recorded how many rounds its JIT took to go quiet. */
    private static String warmup(JsonObject part) {
        Object rounds = part == null ? null : part.getValue("warmupRounds");
        return rounds == null ? "" : "; warm-up rounds " + rounds;
    }

    private void ratioRow(String label, String name) {
        JsonObject r = all.getJsonObject("ratios").getJsonObject(name);
        line("| " + label + " | " + value(r) + " (" + fmt(r.getDouble("numerator"), 0) + " ÷ "
                + fmt(r.getDouble("denominator"), 0) + ") | "
                + (r.getValue("target") == null ? "— (a limit)" : "≥ " + fmt(r.getDouble("target"), 2)) + " |");
    }

    /** The native executable (service N) beside the jar (service A), both with the outbox relay off and driven alike. */
    private void nativeBesideJar() {
        JsonObject jar = obj(obj(all, "startup"), "A");
        JsonObject exe = obj(obj(all, "startup"), "N");
        JsonObject jarHttp = obj(all, "http");
        JsonObject exeHttp = obj(all, "native-http");
        JsonObject ratios = all.getJsonObject("ratios");
        line("");
        line("| native executable beside the jar | jar | native | native ÷ jar |");
        line("|---|---:|---:|---:|");
        line("| process start → /q/health/ready 200 | " + seconds(jar) + " | " + seconds(exe) + " | "
                + quotient(exe, jar, "readyMs") + " |");
        line("| RSS idle, 10 s after ready | " + megabytes(jarHttp, "rssIdleKb") + " | " + megabytes(exeHttp, "rssIdleKb")
                + " | " + quotient(exeHttp, jarHttp, "rssIdleKb") + " |");
        line("| RSS, max during first deliveries | " + megabytes(jarHttp, "rssMaxKbDuringCallbacks") + " | "
                + megabytes(exeHttp, "rssMaxKbDuringCallbacks") + " | "
                + quotient(exeHttp, jarHttp, "rssMaxKbDuringCallbacks") + " |");
        String[][] rows = {{"first-delivery callbacks/s, peak (target ≥ 0.80)", "callbacksFirst", "nativeOverJarFirstDeliveries"},
            {"duplicate deliveries/s, peak (target ≥ 0.80)", "duplicates", "nativeOverJarDuplicates"},
            {"bare endpoint (one Redis GET) req/s, peak", "bare", "nativeOverJarBare"}};
        for (String[] r : rows) {
            line("| " + r[0] + " | " + atPeak(jarHttp, r[1]) + " | " + atPeak(exeHttp, r[1]) + " | " + value(ratios, r[2]) + " |");
        }
        line("| duplicates ÷ bare endpoint, peaks | " + value(ratios, "duplicatesOverBare") + " | "
                + value(ratios, "nativeDuplicatesOverBare") + " | |");
    }

    /** Part tracing: first deliveries at one concurrency, a fresh service for each configuration, beside tracing off. */
    private void tracingBesideOff() {
        JsonObject ratios = all.getJsonObject("ratios");
        line("");
        line("| tracing: first deliveries at c=" + obj(all, "tracing").getValue("concurrency") + ", a fresh service each"
                + " | callbacks/s | p99 | service CPU/delivery | spans to Zipkin | /s ÷ off | p99 ÷ off | CPU ÷ off |");
        line("|---|---:|---:|---:|---:|---:|---:|---:|");
        for (String[] config : TRACING) {
            String c = config[0];
            line("| " + config[1] + " | " + fmt(tracing(c, r -> r.getDouble("perSecond")), 0) + " | "
                    + fmt(tracing(c, r -> r.getDouble("p99Ms")), 1) + " ms | " + fmt(tracing(c, Report::cpuMs), 3) + " ms | "
                    + fmt(tracingRun(c) == null ? null : tracingRun(c).getDouble("zipkinSpans"), 0) + " | "
                    + ("off".equals(c) ? "1 | 1 | 1" : value(ratios, "tracing-" + c + "OverOff") + " | "
                            + value(ratios, "tracing-" + c + "P99OverOff") + " | " + value(ratios, "tracing-" + c + "CpuOverOff"))
                    + " |");
        }
    }

    /** A configuration's run of part tracing. */
    private JsonObject tracingRun(String config) {
        JsonArray runs = obj(all, "tracing") == null ? null : obj(all, "tracing").getJsonArray("runs");
        return runs == null ? null : runs.stream().map(JsonObject.class::cast)
                .filter(r -> config.equals(r.getString("config"))).findFirst().orElse(null);
    }

    /** A figure of a tracing configuration's first-delivery peak, or null. */
    private Double tracing(String config, Function<JsonObject, Double> figure) {
        JsonObject peak = obj(obj(tracingRun(config), "callbacksFirst"), "peak");
        return peak == null ? null : figure.apply(peak);
    }

    /** Service CPU milliseconds per request of a step. */
    private static Double cpuMs(JsonObject step) {
        JsonObject cores = obj(step, "cores");
        return cores == null || step.getDouble("perSecond", 0.0) <= 0 ? null
                : cores.getDouble("service") * 1000 / step.getDouble("perSecond");
    }

    private static String value(JsonObject ratios, String name) {
        return value(obj(ratios, name));
    }

    private static String value(JsonObject ratio) {
        return ratio == null || ratio.getValue("value") == null ? "n/a" : fmt(ratio.getDouble("value"), 2);
    }

    private static Double peak(JsonObject http, String name) {
        return num(obj(http, name), "peak", "perSecond");
    }

    private static JsonArray steps(JsonObject http, String ramp) {
        JsonObject r = obj(http, ramp);
        return r == null ? new JsonArray() : r.getJsonArray("steps", new JsonArray());
    }

    /** A number of {@code parent.name}, or null. */
    private static Double num(JsonObject parent, String name, String number) {
        JsonObject o = obj(parent, name);
        return o == null || !(o.getValue(number) instanceof Number n) ? null : n.doubleValue();
    }

    private static String atPeak(JsonObject http, String name) {
        JsonObject peak = obj(obj(http, name), "peak");
        return peak == null ? "n/a" : fmt(peak.getDouble("perSecond"), 0) + "/s at c=" + peak.getInteger("concurrency")
                + " (p99 " + fmt(peak.getDouble("p99Ms"), 1) + " ms)";
    }

    private static String seconds(JsonObject o) {
        return o == null || o.getValue("readyMs") == null ? "n/a" : fmt(o.getDouble("readyMs") / 1000, 3) + " s";
    }

    private static String megabytes(JsonObject o, String name) {
        return o == null || o.getValue(name) == null ? "n/a" : fmt(o.getDouble(name) / 1024, 0) + " MB";
    }

    private static String quotient(JsonObject x, JsonObject y, String name) {
        return x == null || y == null || x.getValue(name) == null || y.getValue(name) == null || y.getDouble(name) == 0
                ? "n/a" : fmt(x.getDouble(name) / y.getDouble(name), 2);
    }

    private void row(String figure, String result, String p50, String p99, String at, String notes) {
        line("| " + figure + " | " + (result == null ? "n/a" : result) + " | " + (p50 == null ? "" : p50) + " | "
                + (p99 == null ? "" : p99) + " | " + (at == null ? "" : at) + " | " + (notes == null ? "" : notes) + " |");
    }

    private void line(String text) {
        out.append(text).append('\n');
    }

    static JsonObject obj(JsonObject parent, String name) {
        return parent != null && parent.getValue(name) instanceof JsonObject o ? o : null;
    }

    private static String str(JsonObject o, String name) {
        Object value = o == null ? null : o.getValue(name);
        return value == null ? "?" : value.toString();
    }

    /** "a, b, c", the numbers of a JSON array. */
    private static String list(JsonArray numbers) {
        return numbers == null ? "" : numbers.stream().map(n -> fmt(((Number) n).doubleValue(), 0))
                .collect(Collectors.joining(", "));
    }

    static String fmt(Double value, int digits) {
        return value == null ? "n/a" : String.format(Locale.ROOT, "%,." + digits + "f", value);
    }
}
