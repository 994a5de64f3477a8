package dev.idem.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Merges the parts of one run into one JSON document and prints the table with its ratios. */
final class Report {

    private final JsonObject all;
    private final StringBuilder out = new StringBuilder();

    private Report(JsonObject all) {
        this.all = all;
    }

    static void run(Args args) throws IOException {
        Path dir = Path.of(args.get("dir"));
        JsonObject all = new JsonObject();
        for (String part : new String[] {"meta", "startup", "pgbench", "pgbench-grants", "redis", "http", "kafka-pipeline", "kafka-bare",
                "latency-light", "latency", "profile", "native-http", "ha-sync-http", "ha-async-http", "tracing"}) {
            Path file = dir.resolve(part + ".json");
            if (Files.exists(file)) {
                all.put(part, new JsonObject(Files.readString(file)));
            }
        }
        JsonObject comparison = Comparison.load(dir);
        if (comparison != null) {
            all.put("comparison", comparison);
        }
        Report report = new Report(all);
        all.put("ratios", report.ratios());
        String table = report.table();
        all.put("table", table);
        String json = all.encodePrettily();
        Files.writeString(Path.of(args.get("out")), json);
        Files.writeString(Path.of(args.get("latest")), json);
        Files.writeString(Path.of(args.get("table")), table);
        System.out.print(table);
    }

    private JsonObject ratios() {
        JsonObject comparison = obj(all, "comparison");
        JsonObject nativeHttp = obj(all, "native-http");
        // with what traces cost a first delivery, every delivery sampled and 1 %, beside none
        return tracingRatios(new JsonObject()
                .put("nativeOverJarFirstDeliveries", ratio(peak(nativeHttp, "callbacksFirst"), peak("callbacksFirst"), 0.8))
                .put("nativeOverJarDuplicates", ratio(peak(nativeHttp, "duplicates"), peak("duplicates"), 0.8))
                // the same stack's least endpoint, natively and on the JVM: what 0.8 is to be read against
                .put("nativeOverJarBare", ratio(peak(nativeHttp, "bare"), peak("bare"), null))
                .put("nativeDuplicatesOverBare", ratio(peak(nativeHttp, "duplicates"), peak(nativeHttp, "bare"), null))
                // what a synchronous standby costs a first delivery: against the single node, and
                // against the same cluster (and HAProxy hop) without one
                .put("syncStandbyOverSingleNode", ratio(peak(obj(all, "ha-sync-http"), "callbacksFirst"),
                        peak("callbacksFirst"), null))
                .put("syncOverAsyncStandby", ratio(peak(obj(all, "ha-sync-http"), "callbacksFirst"),
                        peak(obj(all, "ha-async-http"), "callbacksFirst"), null))
                .put("peers", comparison == null ? null : Comparison.ratios(comparison))
                .put("firstDeliveryOverPgbench", ratio(peak("callbacksFirst"), pgbenchTps(), 0.6))
                .put("duplicatesOverBare", ratio(peak("duplicates"), peak("bare"), 0.8))
                .put("grantsWithOverWithout", ratio(grants("kafka-pipeline"), grants("kafka-bare"), 0.85))
                .put("duplicatesOverBareByConcurrency", inStep("duplicates", "bare"))
                // the database's own limit for the grants ratio: no target of the service's
                .put("grantsDatabaseWithOverWithout", ratio(pgbenchGrants("withPerSecond"),
                        pgbenchGrants("withoutPerSecond"), null)));
    }

    /**
     * The ratio of two ramps run in step, at each concurrency both reached: measured seconds
     * apart, so a step the shared machine slowed shows here instead of deciding the peaks' ratio.
     */
    private JsonArray inStep(String over, String under) {
        JsonArray ratios = new JsonArray();
        JsonArray a = steps(over);
        JsonArray b = steps(under);
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            JsonObject x = a.getJsonObject(i);
            JsonObject y = b.getJsonObject(i);
            ratios.add(ratio(x.getDouble("perSecond"), y.getDouble("perSecond"), null)
                    .put("concurrency", x.getInteger("concurrency")));
        }
        return ratios;
    }

    private JsonArray steps(String ramp) {
        JsonObject r = obj(obj(all, "http"), ramp);
        return r == null ? new JsonArray() : r.getJsonArray("steps", new JsonArray());
    }

    static JsonObject ratio(Double measured, Double limit, Double target) {
        JsonObject r = new JsonObject().put("numerator", measured).put("denominator", limit).put("target", target);
        if (measured != null && limit != null && limit > 0) {
            r.put("value", Load.round(measured / limit, 2));
        }
        return r;
    }

    private String table() {
        JsonObject meta = obj(all, "meta");
        line("idem bench " + str(meta, "run") + ": " + str(meta, "date") + ", " + str(meta, "cores") + " cores, "
                + str(meta, "memory") + ", load average at start " + str(meta, "loadAverageAtStart") + "; working tree "
                + str(meta, "commit") + ", service jar built " + str(meta, "serviceJarBuilt"));
        if (meta != null && meta.getString("busy") != null && !meta.getString("busy").isBlank()) {
            line("NOTE: the machine was busy during this run (" + meta.getString("busy") + "); figures are noisy.");
        }
        // a run of the comparison alone (BENCH_PARTS=peers) has none of these figures
        if (Stream.of("pgbench", "pgbench-grants", "redis", "http", "kafka-pipeline", "kafka-bare", "latency",
                "latency-light").anyMatch(all::containsKey)) {
            figures(meta);
        }
        if (all.containsKey("native-http")) {
            nativeBesideJar();
        }
        if (obj(all, "ha-sync-http") != null) {
            failoverBesideSingleNode();
        }
        if (obj(all, "tracing") != null) {
            tracingBesideOff();
        }
        JsonObject comparison = obj(all, "comparison");
        if (comparison != null) {
            Comparison.table(comparison, all.getJsonObject("ratios").getJsonObject("peers"), this::line);
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
                null, null, null, a == null ? "" : "Quarkus says started in " + str(a, "quarkusSeconds") + " s"
                        + others(startup));

        ramp("first-delivery signed callbacks", "callbacksFirst", "/s", serviceNote("callbacksFirst"));
        JsonObject http = obj(all, "http");
        JsonObject dup = obj(http, "duplicates");
        String layers = dup == null ? "" : dup.getLong("answeredByRedis", 0L) + " of "
                + dup.getLong("answeredByAnyLayer", 0L) + " answered by Redis alone";
        ramp("duplicate deliveries (Redis DONE path)", "duplicates", "/s", layers);
        ramp("bare GET /bench/redis-get (one Redis GET)", "bare", "/s", "");
        ramp("Idempotency-Key first execution (POST /api/orders)", "keyFirst", "/s", "");
        ramp("Idempotency-Key replay (same key, same body)", "keyReplay", "/s", "");

        grantsRow("coupon grants via Kafka, pipeline on", "kafka-pipeline");
        grantsRow("coupon grants via Kafka, pipeline off", "kafka-bare");

        latencyRow("callback → coupon latency, at half the first-delivery peak", "latency");
        latencyRow("callback → coupon latency, light load (a tenth of the first-delivery peak)", "latency-light");

        JsonObject pg = obj(all, "pgbench");
        row("pgbench: the callback's SQL in one transaction", pg == null ? null : fmt(pg.getDouble("tps"), 0) + " TPS",
                null, null, pg == null ? null : "-c " + pg.getValue("clients") + " -j " + pg.getValue("threads")
                        + " -M prepared -T " + pg.getValue("seconds"),
                pg == null ? "" : "median of " + list(pg.getJsonArray("tpsRuns")) + " TPS; latency avg " + fmt(pg.getDouble("latencyAvgMs"), 2) + " ms");
        JsonObject grants = obj(all, "pgbench-grants");
        row("pgbench: a poll of grants in one transaction, with the dedup SQL / without",
                grants == null ? null : fmt(grants.getDouble("withPerSecond"), 0) + "/s / "
                        + fmt(grants.getDouble("withoutPerSecond"), 0) + "/s",
                null, null, grants == null ? null : grants.getValue("poll") + " grants per transaction, -c "
                        + grants.getValue("clients") + " -j " + grants.getValue("threads") + " -M prepared -T "
                        + grants.getValue("seconds"),
                grants == null ? "" : "medians of " + list(grants.getJsonArray("withRuns")) + " and "
                        + list(grants.getJsonArray("withoutRuns")) + " grants/s");
        JsonObject redis = obj(all, "redis");
        row("redis-benchmark SET key:__rand_int__ v NX EX 60", redis == null ? null : fmt(redis.getDouble("rps"), 0) + "/s",
                redis == null ? null : fmt(redis.getDouble("p50Ms"), 2) + " ms",
                redis == null ? null : fmt(redis.getDouble("p99Ms"), 2) + " ms",
                redis == null ? null : redis.getValue("clients") + " clients", "");
        Long rss = http == null ? null : http.getLong("rssMaxKbDuringCallbacks");
        row("service RSS under load (max VmRSS)", rss == null ? null : fmt(rss / 1024.0, 0) + " MB", null, null,
                "first-delivery callbacks", http == null ? "" : "max over the HTTP part "
                        + fmt(http.getLong("rssMaxKbOverall", 0L) / 1024.0, 0) + " MB");

        line("");
        line("| ratio | measured | target |");
        line("|---|---:|---:|");
        JsonObject ratios = all.getJsonObject("ratios");
        ratioRow("first-delivery callbacks/s ÷ pgbench TPS", ratios.getJsonObject("firstDeliveryOverPgbench"));
        ratioRow("duplicate deliveries/s ÷ bare endpoint req/s", ratios.getJsonObject("duplicatesOverBare"));
        ratioRow("grants/s with the pipeline ÷ without", ratios.getJsonObject("grantsWithOverWithout"));
        ratioRow("the same for the database alone: pgbench grants/s with the dedup SQL ÷ without",
                ratios.getJsonObject("grantsDatabaseWithOverWithout"));
        StringBuilder inStep = new StringBuilder();
        for (Object o : ratios.getJsonArray("duplicatesOverBareByConcurrency")) {
            JsonObject r = (JsonObject) o;
            inStep.append(inStep.length() == 0 ? "" : " · ").append("c=").append(r.getInteger("concurrency"))
                    .append(": ").append(value(r));
        }
        if (inStep.length() > 0) {
            line("");
            line("Duplicates ÷ bare endpoint at each concurrency (each pair measured one after the other): " + inStep);
        }

        line("");
        line("Ramps (throughput/s and p99 ms at each concurrency; after three steps the ramp stops at the first that gains"
                + " less than " + str(meta, "stopGainPercent") + "% over the best before it" + warmup(obj(all, "http"))
                + "):");
        line("");
        line("| ramp | steps |");
        line("|---|---|");
        for (String name : new String[] {"keyFirst", "callbacksFirst", "duplicates", "bare", "keyReplay"}) {
            JsonObject r = obj(http, name);
            if (r == null) {
                continue;
            }
            StringBuilder steps = new StringBuilder();
            for (Object o : r.getJsonArray("steps", new JsonArray())) {
                JsonObject s = (JsonObject) o;
                if (steps.length() > 0) {
                    steps.append(" · ");
                }
                steps.append("c=").append(s.getInteger("concurrency")).append(": ")
                        .append(fmt(s.getDouble("perSecond"), 0)).append(" (")
                        .append(fmt(s.getDouble("p99Ms"), 1)).append(")");
                if (s.getLong("failed", 0L) > 0) {
                    steps.append(" ").append(s.getLong("failed")).append(" failed");
                }
            }
            line("| " + r.getString("name") + " | " + steps + " |");
        }
        profile();
    }

    /** With BENCH_PROFILE=1: the service's CPU per request at each step, as async-profiler sampled it. */
    private void profile() {
        JsonObject profile = obj(all, "profile");
        if (profile == null) {
            return;
        }
        line("");
        line("Service CPU per request, µs (async-profiler, a sample every " + profile.getValue("intervalMs")
                + " ms; kernel / native / Java frames; stacks per step in profile/):");
        line("");
        line("| ramp | steps |");
        line("|---|---|");
        Map<String, StringBuilder> rows = new LinkedHashMap<>();
        for (Object o : profile.getJsonArray("steps", new JsonArray())) {
            JsonObject s = (JsonObject) o;
            JsonObject kinds = s.getJsonObject("byKind");
            if (kinds == null) {
                continue;
            }
            StringBuilder row = rows.computeIfAbsent(s.getString("ramp"), r -> new StringBuilder());
            row.append(row.length() == 0 ? "" : " · ").append("c=").append(s.getInteger("concurrency")).append(": ")
                    .append(fmt(s.getDouble("serviceCpuUsPerRequest"), 1)).append(" (")
                    .append(fmt(kinds.getDouble("kernel", 0.0), 1)).append(" / ")
                    .append(fmt(kinds.getDouble("native", 0.0), 1)).append(" / ")
                    .append(fmt(kinds.getDouble("java", 0.0), 1)).append(")");
        }
        rows.forEach((ramp, steps) -> line("| " + ramp + " | " + steps + " |"));
    }

    private void latencyRow(String label, String part) {
        JsonObject latency = obj(all, part);
        if (latency == null) {
            row(label, null, null, null, null, "");
            return;
        }
        JsonObject cb = obj(latency, "callbacks");
        String achieved = cb == null ? "n/a" : fmt(cb.getDouble("perSecond"), 0);
        row(label, latency.getLong("coupons") + " of " + latency.getLong("expected") + " coupons",
                fmt(latency.getDouble("p50Ms"), 1) + " ms", fmt(latency.getDouble("p99Ms"), 1) + " ms",
                fmt(latency.getDouble("rate"), 0) + "/s sent (" + achieved + "/s answered)",
                "max " + fmt(latency.getDouble("maxMs"), 1) + " ms; the callbacks' own answers p50 "
                        + (cb == null ? "n/a" : fmt(cb.getDouble("p50Ms"), 1) + " / p99 " + fmt(cb.getDouble("p99Ms"), 1))
                        + " ms (open loop); coupons granted at " + fmt(latency.getDouble("grantsPerSecond"), 0) + "/s; p50 "
                        + fmt(latency.getDouble("firstTenthP50Ms"), 0) + " ms for the first tenth of the callbacks, "
                        + fmt(latency.getDouble("lastTenthP50Ms"), 0) + " ms for the last"
                        + stages(obj(latency, "stages")) + warmup(latency));
    }

    private static String stages(JsonObject stages) {
        JsonObject relay = obj(stages, "outboxWrittenToPublishedMarked");
        JsonObject coupon = obj(stages, "outboxWrittenToCouponGranted");
        if (relay == null || coupon == null) {
            return "";
        }
        return "; outbox row → coupon p50 " + fmt(coupon.getDouble("p50Ms"), 1) + " / p99 "
                + fmt(coupon.getDouble("p99Ms"), 1) + " ms, of which outbox row → marked published p50 "
                + fmt(relay.getDouble("p50Ms"), 1) + " / p99 " + fmt(relay.getDouble("p99Ms"), 1) + " ms";
    }

    private static String cores(JsonObject cores) {
        if (cores == null) {
            return "";
        }
        String parts = cores.containsKey("serviceJit")
                ? " (JIT " + fmt(cores.getDouble("serviceJit"), 2) + ", GC " + fmt(cores.getDouble("serviceGc"), 2) + ")"
                : "";
        return "cores: service " + fmt(cores.getDouble("service"), 2) + parts + ", postgres " + fmt(cores.getDouble("postgres"), 2)
                + ", redis " + fmt(cores.getDouble("redis"), 2) + ", kafka " + fmt(cores.getDouble("kafka"), 2)
                + ", load generator " + fmt(cores.getDouble("loadGenerator"), 2) + ", other "
                + fmt(cores.getDouble("other"), 2);
    }

    private void ramp(String label, String name, String unit, String notes) {
        JsonObject r = obj(obj(all, "http"), name);
        JsonObject peak = obj(r, "peak");
        if (peak == null) {
            row(label, null, null, null, null, notes);
            return;
        }
        String failed = peak.getLong("failed", 0L) > 0 ? peak.getLong("failed") + " failed; " : "";
        row(label, fmt(peak.getDouble("perSecond"), 0) + unit, fmt(peak.getDouble("p50Ms"), 2) + " ms",
                fmt(peak.getDouble("p99Ms"), 2) + " ms", "c=" + peak.getInteger("concurrency"),
                failed + notes + (notes.isEmpty() ? "" : "; ") + cores(obj(peak, "cores")));
    }

    private String serviceNote(String name) {
        JsonObject r = obj(obj(all, "http"), name);
        if (r == null) {
            return "";
        }
        long degraded = 0;
        JsonObject metrics = r.getJsonObject("metrics");
        if (metrics != null) {
            degraded = Metrics.sum(metrics, "idem_redis_degraded_total");
        }
        return r.getValue("paidOrders") + " orders paid" + (degraded > 0 ? ", Redis skipped " + degraded + " times" : "");
    }

    private void grantsRow(String label, String part) {
        JsonObject k = obj(all, part);
        JsonObject m = obj(k, "measured");
        if (m == null) {
            row(label, null, null, null, null, "");
            return;
        }
        JsonObject drain = obj(k, "drain");
        row(label, fmt(m.getDouble("perSecond"), 0) + "/s", null, null,
                m.getLong("messages") + " messages",
                m.getLong("coupons") + " coupons; " + fmt(m.getDouble("perSecondWall"), 0) + "/s produce → last coupon"
                        + (drain == null ? "" : "; consumer group members " + drain.getValue("members"))
                        + warmup(k) + "; " + cores(obj(m, "cores")));
    }

    /** "; warm-up rounds N" where the part recorded how many rounds its JIT took to go quiet. */
    private static String warmup(JsonObject part) {
        Object rounds = part == null ? null : part.getValue("warmupRounds");
        return rounds == null ? "" : "; warm-up rounds " + rounds;
    }

    private void ratioRow(String label, JsonObject r) {
        line("| " + label + " | " + value(r)
                + " (" + fmt(r.getDouble("numerator"), 0) + " ÷ " + fmt(r.getDouble("denominator"), 0) + ") | "
                + (r.getValue("target") == null ? "— (a limit)" : "≥ " + fmt(r.getDouble("target"), 2)) + " |");
    }

    private static String others(JsonObject startup) {
        if (startup == null) {
            return "";
        }
        StringBuilder s = new StringBuilder();
        for (String name : new String[] {"B", "C"}) {
            JsonObject x = startup.getJsonObject(name);
            if (x != null) {
                s.append(s.length() == 0 ? "; restarts " : ", ").append(fmt(x.getDouble("readyMs") / 1000, 2)).append(" s");
            }
        }
        return s.toString();
    }

    private Double peak(String name) {
        return peak(obj(all, "http"), name);
    }

    private static Double peak(JsonObject http, String name) {
        JsonObject peak = obj(obj(http, name), "peak");
        return peak == null ? null : peak.getDouble("perSecond");
    }

    /**
     * The native executable (service N) beside the jar (service A), both with the outbox relay off
     * and driven alike: start-up, memory, and the warmed-up peaks of the two paths that matter.
     */
    private void nativeBesideJar() {
        JsonObject startup = obj(all, "startup");
        JsonObject jar = obj(startup, "A");
        JsonObject exe = obj(startup, "N");
        JsonObject jarHttp = obj(all, "http");
        JsonObject exeHttp = obj(all, "native-http");
        JsonObject ratios = all.getJsonObject("ratios");
        line("");
        line("| native executable beside the jar | jar | native | native ÷ jar |");
        line("|---|---:|---:|---:|");
        line("| process start → /q/health/ready 200 | " + seconds(jar, "readyMs") + " | " + seconds(exe, "readyMs")
                + " | " + quotient(exe, jar, "readyMs") + " |");
        line("| RSS idle, 10 s after ready | " + megabytes(jar, "rssIdleKb") + " | " + megabytes(exe, "rssIdleKb")
                + " | " + quotient(exe, jar, "rssIdleKb") + " |");
        line("| RSS, max during first deliveries | " + megabytes(jarHttp, "rssMaxKbDuringCallbacks") + " | "
                + megabytes(exeHttp, "rssMaxKbDuringCallbacks") + " | "
                + quotient(exeHttp, jarHttp, "rssMaxKbDuringCallbacks") + " |");
        line("| RSS, max over the HTTP part | " + megabytes(jarHttp, "rssMaxKbOverall") + " | "
                + megabytes(exeHttp, "rssMaxKbOverall") + " | " + quotient(exeHttp, jarHttp, "rssMaxKbOverall") + " |");
        nativeRatio("first-delivery callbacks/s, peak", jarHttp, exeHttp, "callbacksFirst",
                ratios.getJsonObject("nativeOverJarFirstDeliveries"));
        nativeRatio("duplicate deliveries/s, peak", jarHttp, exeHttp, "duplicates",
                ratios.getJsonObject("nativeOverJarDuplicates"));
        nativeRatio("bare endpoint (one Redis GET) req/s, peak", jarHttp, exeHttp, "bare",
                ratios.getJsonObject("nativeOverJarBare"));
        line("| duplicates ÷ bare endpoint, peaks | " + value(ratios.getJsonObject("duplicatesOverBare")) + " | "
                + value(ratios.getJsonObject("nativeDuplicatesOverBare")) + " | |");
    }

    /** A ratio's value to two places, or n/a when one of its sides did not run. */
    /** First deliveries on the Patroni cluster, with a synchronous standby and without, beside A's single node. */
    private void failoverBesideSingleNode() {
        JsonObject ratios = all.getJsonObject("ratios");
        line("");
        line("| Postgres with failover (through HAProxy) | first deliveries, peak | ÷ single node |");
        line("|---|---:|---:|");
        line("| single node (service A) | " + atPeak(obj(obj(obj(all, "http"), "callbacksFirst"), "peak")) + " | 1 |");
        line("| Patroni, a synchronous standby | " + atPeak(obj(obj(obj(all, "ha-sync-http"), "callbacksFirst"), "peak"))
                + " | " + value(ratios.getJsonObject("syncStandbyOverSingleNode")) + " |");
        line("| Patroni, asynchronous replication | " + atPeak(obj(obj(obj(all, "ha-async-http"), "callbacksFirst"), "peak"))
                + " | " + value(ratio(peak(obj(all, "ha-async-http"), "callbacksFirst"), peak("callbacksFirst"), null)) + " |");
        line("| synchronous ÷ asynchronous, the same cluster | | " + value(ratios.getJsonObject("syncOverAsyncStandby")) + " |");
    }

    /** Part tracing's configurations: name, label, and the name of its ratios to tracing off. */
    private static final String[][] TRACING = {{"off", "tracing off (no exporter)", null},
            {"all", "every delivery sampled (ratio 1.0)", "tracingAllOverOff"},
            {"1pct", "1 % sampled (ratio 0.01)", "tracingOnePercentOverOff"}};

    /**
     * Part tracing: first deliveries at one concurrency, each run on a fresh service; per
     * configuration the mean of its runs (each run in parentheses) and the ratio to tracing off.
     */
    private void tracingBesideOff() {
        JsonObject ratios = all.getJsonObject("ratios");
        line("");
        line("| tracing: first deliveries at c=" + obj(all, "tracing").getValue("concurrency") + ", a fresh service each run"
                + " | callbacks/s | p99 | RSS under load | service CPU/delivery | spans to Zipkin | cores of other"
                + " processes (Zipkin here) | /s ÷ off | p99 ÷ off | CPU/delivery ÷ off |");
        line("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (String[] config : TRACING) {
            List<JsonObject> peaks = tracingRuns(config[0]).stream().map(Report::tracingPeak).toList();
            long failed = peaks.stream().mapToLong(p -> p.getLong("failed", 0L)).sum();
            boolean dry = peaks.stream().anyMatch(p -> p.getBoolean("exhausted", false));
            line("| " + config[1] + (failed > 0 ? "; " + failed + " failed" : "") + (dry ? "; a run ran out of orders" : "")
                    + " | " + runs(config[0], r -> tracingPeak(r).getDouble("perSecond"), 0, "")
                    + " | " + runs(config[0], r -> tracingPeak(r).getDouble("p99Ms"), 1, " ms")
                    + " | " + runs(config[0], r -> r.getDouble("rssMaxKbDuringCallbacks", 0.0) / 1024, 0, " MB")
                    + " | " + runs(config[0], Report::cpuMsPerDelivery, 3, " ms")
                    + " | " + runs(config[0], r -> r.getDouble("zipkinSpans"), 0, "")
                    + " | " + runs(config[0], r -> obj(tracingPeak(r), "cores") == null ? null
                            : tracingPeak(r).getJsonObject("cores").getDouble("other"), 2, "")
                    + (config[2] == null ? " | 1 | 1 | 1 |" : " | " + value(ratios.getJsonObject(config[2])) + " | "
                            + value(ratios.getJsonObject(config[2] + "P99")) + " | "
                            + value(ratios.getJsonObject(config[2] + "Cpu")) + " |"));
        }
    }

    /** The ratios of part tracing: each configuration's mean callbacks/s, p99 and service CPU per delivery ÷ tracing off's. */
    private JsonObject tracingRatios(JsonObject ratios) {
        for (String[] config : new String[][] {TRACING[1], TRACING[2]}) {
            ratios.put(config[2], tracingRatio(config[0], r -> tracingPeak(r).getDouble("perSecond")))
                    .put(config[2] + "P99", tracingRatio(config[0], r -> tracingPeak(r).getDouble("p99Ms")))
                    .put(config[2] + "Cpu", tracingRatio(config[0], Report::cpuMsPerDelivery));
        }
        return ratios;
    }

    /** A configuration's runs of part tracing that measured something, in the order they ran. */
    private List<JsonObject> tracingRuns(String config) {
        JsonObject tracing = obj(all, "tracing");
        return tracing == null ? List.of() : tracing.getJsonArray("runs").stream().map(JsonObject.class::cast)
                .filter(r -> config.equals(r.getString("config")) && tracingPeak(r) != null).toList();
    }

    private static JsonObject tracingPeak(JsonObject run) {
        return obj(obj(run, "callbacksFirst"), "peak");
    }

    /** The mean of a figure over a configuration's runs, or null when it has none. */
    private Double tracingMean(String config, Function<JsonObject, Double> figure) {
        List<Double> values = tracingRuns(config).stream().map(figure).filter(Objects::nonNull).toList();
        return values.isEmpty() ? null : values.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
    }

    private JsonObject tracingRatio(String config, Function<JsonObject, Double> figure) {
        return ratio(tracingMean(config, figure), tracingMean("off", figure), null);
    }

    /** "mean unit (run · run)", or n/a. */
    private String runs(String config, Function<JsonObject, Double> figure, int digits, String unit) {
        Double mean = tracingMean(config, figure);
        List<JsonObject> runs = tracingRuns(config);
        return mean == null ? "n/a" : fmt(mean, digits) + unit + (runs.size() < 2 ? ""
                : runs.stream().map(r -> fmt(figure.apply(r), digits)).collect(Collectors.joining(" · ", " (", ")")));
    }

    private static Double cpuMsPerDelivery(JsonObject run) {
        JsonObject cores = obj(tracingPeak(run), "cores");
        return cores == null ? null : cores.getDouble("service") * 1000 / tracingPeak(run).getDouble("perSecond");
    }

    private static String value(JsonObject ratio) {
        return ratio.getValue("value") == null ? "n/a" : fmt(ratio.getDouble("value"), 2);
    }

    private void nativeRatio(String label, JsonObject jarHttp, JsonObject exeHttp, String name, JsonObject ratio) {
        JsonObject jarPeak = obj(obj(jarHttp, name), "peak");
        JsonObject exePeak = obj(obj(exeHttp, name), "peak");
        Double target = ratio.getDouble("target");
        line("| " + label + (target == null ? "" : " (target ≥ " + fmt(target, 2) + ")") + " | " + atPeak(jarPeak) + " | "
                + atPeak(exePeak) + " | "
                + value(ratio) + " |");
    }

    private static String atPeak(JsonObject peak) {
        return peak == null ? "n/a" : fmt(peak.getDouble("perSecond"), 0) + "/s at c=" + peak.getInteger("concurrency")
                + " (p99 " + fmt(peak.getDouble("p99Ms"), 1) + " ms)";
    }

    private static String seconds(JsonObject o, String name) {
        return o == null || o.getValue(name) == null ? "n/a" : fmt(o.getDouble(name) / 1000, 3) + " s";
    }

    private static String megabytes(JsonObject o, String name) {
        return o == null || o.getValue(name) == null ? "n/a" : fmt(o.getDouble(name) / 1024, 0) + " MB";
    }

    private static String quotient(JsonObject x, JsonObject y, String name) {
        if (x == null || y == null || x.getValue(name) == null || y.getValue(name) == null || y.getDouble(name) == 0) {
            return "n/a";
        }
        return fmt(x.getDouble(name) / y.getDouble(name), 2);
    }

    private Double pgbenchTps() {
        JsonObject pg = obj(all, "pgbench");
        return pg == null ? null : pg.getDouble("tps");
    }

    private Double pgbenchGrants(String name) {
        JsonObject grants = obj(all, "pgbench-grants");
        return grants == null ? null : grants.getDouble(name);
    }

    private Double grants(String part) {
        JsonObject m = obj(obj(all, part), "measured");
        return m == null ? null : m.getDouble("perSecond");
    }

    private void row(String figure, String result, String p50, String p99, String at, String notes) {
        line("| " + figure + " | " + (result == null ? "n/a" : result) + " | " + (p50 == null ? "" : p50) + " | "
                + (p99 == null ? "" : p99) + " | " + (at == null ? "" : at) + " | " + (notes == null ? "" : notes) + " |");
    }

    private void line(String text) {
        out.append(text).append('\n');
    }

    static JsonObject obj(JsonObject parent, String name) {
        if (parent == null) {
            return null;
        }
        Object value = parent.getValue(name);
        return value instanceof JsonObject o ? o : null;
    }

    private static String str(JsonObject o, String name) {
        Object value = o == null ? null : o.getValue(name);
        return value == null ? "?" : value.toString();
    }

    /** "a, b, c", the numbers of a JSON array. */
    private static String list(JsonArray numbers) {
        StringBuilder all = new StringBuilder();
        for (int i = 0; numbers != null && i < numbers.size(); i++) {
            all.append(i == 0 ? "" : ", ").append(fmt(((Number) numbers.getValue(i)).doubleValue(), 0));
        }
        return all.toString();
    }

    static String fmt(Double value, int digits) {
        return value == null ? "n/a" : String.format(Locale.ROOT, "%,." + digits + "f", value);
    }
}
