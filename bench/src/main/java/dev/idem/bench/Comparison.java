package dev.idem.bench;

import static dev.idem.bench.Report.fmt;
import static dev.idem.bench.Report.obj;
import static dev.idem.bench.Report.ratio;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The comparison part of the report: idem ÷ each comparison service, figure by figure and
 * concurrency by concurrency, from the script's {@code compare.json} (the services, in order, and
 * the settings) and one {@code compare-<name>.json} per service ({@link HttpPhases} with
 * {@code --fixed true}), idem's measured beside each peer in {@code compare-idem-<peer>.json}
 * ({@code compare-idem.json} in runs that measured it once, after the peers); with commits made
 * dearer, the same names with {@code .dear.json}; end to end, {@code e2e-<name>[.dear].json}
 * (idem's among them).
 */
final class Comparison {

    /** One figure: its part in a service's JSON, its label, and the kind of service that serves it. */
    private record Figure(String part, String label, String kind) {}

    private static final List<Figure> FIGURES = List.of(
            new Figure("callbacksFirst", "first-delivery callbacks", "callbacks"),
            new Figure("duplicates", "duplicate deliveries", "callbacks"),
            new Figure("keyFirst", "Idempotency-Key first executions", "keys"),
            new Figure("keyReplay", "Idempotency-Key replays", "keys"));

    private Comparison() {}

    /** How commits cost in a comparison: as the server ships, or each made dearer on purpose. */
    static final List<String> COMMITS = List.of("shipped", "dear");

    /** The comparison of the run in {@code dir} with {@code commits}, with every service's figures; null when it had none. */
    static JsonObject load(Path dir, String commits) throws IOException {
        String ext = "shipped".equals(commits) ? "" : "." + commits;
        Path index = dir.resolve("compare" + ext + ".json");
        if (!Files.exists(index)) {
            return null;
        }
        JsonObject comparison = new JsonObject(Files.readString(index));
        JsonObject services = new JsonObject();
        for (String name : names(comparison, true)) {
            Path file = dir.resolve("compare-" + name + ext + ".json");
            services.put(name, Files.exists(file) ? new JsonObject(Files.readString(file))
                    : new JsonObject().put("name", name).put("error", "no figures (see the run's log)"));
            Path beside = dir.resolve("compare-idem-" + name + ext + ".json");
            if (Files.exists(beside)) {
                services.put(BESIDE + name, new JsonObject(Files.readString(beside)));
            }
        }
        JsonObject endToEnd = new JsonObject();
        for (String name : names(comparison, true)) {
            Path file = dir.resolve("e2e-" + name + ext + ".json");
            if (Files.exists(file)) {
                endToEnd.put(name, new JsonObject(Files.readString(file)));
            }
        }
        return comparison.put("services", services).put("endToEnd", endToEnd);
    }

    /** idem measured beside a peer, under this prefix and the peer's name. */
    private static final String BESIDE = "idem beside ";

    /**
     * idem ÷ each peer: for every figure both served, the ratios at each concurrency both reached,
     * and of the best steps. Where both took turns in rounds, the req/s ratio is the median of the
     * rounds' ratios, each of two steps seconds apart.
     */
    static JsonObject ratios(JsonObject comparison) {
        JsonObject all = new JsonObject();
        for (String name : names(comparison, false)) {
            JsonObject idem = idemFor(comparison, name);
            JsonObject peer = service(comparison, name);
            JsonObject figures = new JsonObject();
            for (Figure figure : served(peer)) {
                JsonArray a = steps(idem, figure);
                JsonArray b = steps(peer, figure);
                JsonArray byConcurrency = new JsonArray();
                for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
                    JsonObject x = a.getJsonObject(i);
                    JsonObject y = b.getJsonObject(i);
                    JsonObject r = new JsonObject().put("concurrency", x.getInteger("concurrency"));
                    for (String f : new String[] {"perSecond", "p50Ms", "p99Ms"}) {
                        r.put(f, ratio(x.getDouble(f), y.getDouble(f), null));
                    }
                    JsonArray rounds = roundRatios(x, y);
                    if (!rounds.isEmpty()) {
                        r.getJsonObject("perSecond").put("value", median(rounds)).put("rounds", rounds);
                    }
                    byConcurrency.add(r
                            .put("postgresMsPerRequest", ratio(cpuMs(x, "postgres", true), cpuMs(y, "postgres", true), null))
                            .put("serviceMsPerRequest", ratio(cpuMs(x, "service", cpuKnown(idem)),
                                    cpuMs(y, "service", cpuKnown(peer)), null)));
                }
                figures.put(figure.part(), byConcurrency).put(figure.part() + "Best", ratio(best(a), best(b), null));
            }
            JsonObject a = endToEnd(comparison, "idem");
            JsonObject b = endToEnd(comparison, name);
            if (a != null && b != null) {
                figures.put("endToEnd", new JsonObject()
                        .put("perSecond", ratio(a.getDouble("perSecond"), b.getDouble("perSecond"), null))
                        .put("p99Ms", ratio(a.getDouble("p99Ms"), b.getDouble("p99Ms"), null)));
            }
            all.put(name, figures);
        }
        return all;
    }

    /** Each round's idem ÷ peer req/s, where both steps ran the same rounds side by side; empty otherwise. */
    private static JsonArray roundRatios(JsonObject idemStep, JsonObject peerStep) {
        JsonArray a = idemStep.getJsonArray("roundsPerSecond", new JsonArray());
        JsonArray b = peerStep.getJsonArray("roundsPerSecond", new JsonArray());
        JsonArray ratios = new JsonArray();
        for (int r = 0; a.size() == b.size() && r < a.size(); r++) {
            if (b.getDouble(r) > 0) {
                ratios.add(Load.round(a.getDouble(r) / b.getDouble(r), 2));
            }
        }
        return ratios;
    }

    /** The median of numbers (the mean of the middle two when they are even). */
    private static double median(JsonArray numbers) {
        List<Double> sorted = numbers.stream().map(n -> ((Number) n).doubleValue()).sorted().toList();
        int n = sorted.size();
        return Load.round(n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2, 2);
    }

    /** idem as measured for the comparison with {@code peer}: beside it when it was, else the one idem of the run. */
    private static JsonObject idemFor(JsonObject comparison, String peer) {
        JsonObject beside = obj(obj(comparison, "services"), BESIDE + peer);
        return beside != null ? beside : service(comparison, "idem");
    }

    /** A service's end-to-end step, with its coupons; null when it was not measured. */
    private static JsonObject endToEnd(JsonObject comparison, String name) {
        return obj(obj(obj(comparison, "endToEnd"), name), "endToEnd");
    }

    /** CPU milliseconds of a group of processes per answered request during a step; null when unknown. */
    private static Double cpuMs(JsonObject step, String group, boolean known) {
        JsonObject cores = obj(step, "cores");
        double rate = step.getDouble("perSecond", 0.0);
        return !known || cores == null || rate <= 0 ? null : Load.round(cores.getDouble(group, 0.0) * 1000 / rate, 4);
    }

    /** The table's section: how each service ran, then one table per peer. */
    static void table(JsonObject comparison, JsonObject ratios, Consumer<String> line) {
        line.accept("");
        Integer delay = comparison.getInteger("commitDelayMicros");
        line.accept("**Commits " + (delay == null ? "as Postgres ships them" : "made dearer: every WAL flush waits "
                + delay + " µs first (`commit_delay`, `commit_siblings = 0`, on each service's database), as on a slow"
                + " disk; commits that arrive meanwhile share the flush") + ".**");
        line.accept("");
        boolean beside = names(comparison, false).stream().anyMatch(n -> obj(obj(comparison, "services"), BESIDE + n) != null);
        line.accept((beside ? "Each comparison service beside idem, both running, each on its own fresh database and on what"
                + " the service serves, taking turns: after the same warm-up (at least " : "Comparison services, one at a"
                + " time, each on what it serves, after the same warm-up (at least ")
                + fmt(comparison.getDouble("warmupSeconds"), 0) + " s), " + comparison.getValue("stepSeconds") + " s at each c"
                + (beside ? ", " + comparison.getValue("rounds", "?") + " rounds, each round of one right after the same"
                + " round of the other; a figure is the median round" : "")
                + ", driven by the same load generator; a ratio is idem ÷ the service"
                + (beside ? " (req/s: the median of the rounds' ratios)" : "")
                + " (above 1 favours idem for req/s, below 1 for latencies and CPU):");
        line.accept("");
        for (String name : names(comparison, false)) {
            line.accept("- " + about(service(comparison, name)));
            line.accept("- " + about(idemFor(comparison, name)) + (beside ? ", beside " + name : ""));
        }
        for (String name : names(comparison, false)) {
            JsonObject idem = idemFor(comparison, name);
            JsonObject figures = obj(ratios, name);
            if (served(service(comparison, name)).isEmpty() || figures == null) {
                continue;
            }
            line.accept("");
            line.accept("| idem ÷ " + name + " | c | req/s | p50 ms | p99 ms | Postgres CPU ms/request"
                    + " | service CPU ms/request | load generator cores: idem; " + name + " |");
            line.accept("|---|---:|---:|---:|---:|---:|---:|---|");
            for (Figure figure : served(service(comparison, name))) {
                JsonArray a = steps(idem, figure);
                JsonArray b = steps(service(comparison, name), figure);
                JsonArray byConcurrency = figures.getJsonArray(figure.part(), new JsonArray());
                for (int i = 0; i < byConcurrency.size(); i++) {
                    JsonObject r = byConcurrency.getJsonObject(i);
                    line.accept("| " + figure.label() + " | " + r.getInteger("concurrency") + " | "
                            + cell(r, "perSecond", 0) + " | " + cell(r, "p50Ms", 2) + " | " + cell(r, "p99Ms", 2) + " | "
                            + cell(r, "postgresMsPerRequest", 3) + " | " + cell(r, "serviceMsPerRequest", 3) + " | "
                            + loadCores(a.getJsonObject(i)) + "; " + loadCores(b.getJsonObject(i)) + " |");
                }
                line.accept("| " + figure.label() + " | best | " + cell(figures, figure.part() + "Best", 0) + " |  |  |  |  |  |");
            }
        }
        endToEndTable(comparison, ratios, line);
    }

    /** End to end: each service's callbacks with its outbox published and coupons granted, and how far its coupons lagged. */
    private static void endToEndTable(JsonObject comparison, JsonObject ratios, Consumer<String> line) {
        if (endToEnd(comparison, "idem") == null) {
            return;
        }
        line.accept("");
        line.accept("End to end: first-delivery callbacks with each service's outbox published to Kafka and its coupons"
                + " granted meanwhile; then the paid orders without their coupon, from the moment the load stopped:");
        line.accept("");
        line.accept("| service | c | callbacks/s | p99 ms | paid orders | without a coupon at the stop | every coupon granted after | idem ÷ service: req/s; p99 |");
        line.accept("|---|---:|---:|---:|---:|---:|---:|---|");
        for (String name : names(comparison, true)) {
            JsonObject step = endToEnd(comparison, name);
            if (step == null) {
                continue;
            }
            JsonObject coupons = obj(step, "coupons");
            JsonObject r = "idem".equals(name) ? null : obj(obj(ratios, name), "endToEnd");
            Double caughtUp = coupons == null ? null : coupons.getDouble("caughtUpSeconds");
            line.accept("| " + name + " | " + step.getInteger("concurrency") + " | " + fmt(step.getDouble("perSecond"), 0)
                    + " | " + fmt(step.getDouble("p99Ms"), 2) + " | "
                    + (coupons == null ? "n/a | n/a | n/a" : fmt(coupons.getDouble("paidOrders"), 0) + " | "
                            + fmt(coupons.getDouble("behindAtStop"), 0) + " | "
                            + (caughtUp != null ? fmt(caughtUp, 1) + " s"
                                    : "not within the drain: " + fmt(coupons.getDouble("behindAtEnd"), 0) + " still without"))
                    + " | " + (r == null ? "" : cell(r, "perSecond", 0) + "; " + cell(r, "p99Ms", 2)) + " |");
        }
    }

    /** How a service ran: where, whether the bench started it on a fresh database, what it served. */
    private static String about(JsonObject service) {
        String name = service.getString("name");
        String where = name + ("idem".equals(name) ? "" : " (" + service.getString("url") + ")") + ": ";
        if (service.getString("error") != null && service.getValue("warmupRounds") == null && served(service).isEmpty()) {
            return where + "not measured: " + service.getString("error");
        }
        String db = service.getString("freshDatabase");
        return where + (service.getBoolean("startedByBench", false)
                ? "started by the bench on a fresh database (" + (db == null ? "?" : db.substring(db.lastIndexOf('/') + 1)) + ")"
                : "used as it runs: its database is not fresh")
                + ", measured on " + service.getString("kinds", "nothing")
                + (cpuKnown(service) ? "" : "; its process is not known here, so its CPU is n/a")
                + (service.getString("error") == null ? "" : "; FAILED: " + service.getString("error"));
    }

    private static String loadCores(JsonObject step) {
        JsonObject cores = obj(step, "cores");
        return cores == null ? "n/a" : fmt(cores.getDouble("loadGenerator"), 2);
    }

    /** "0.55 (1,752 ÷ 3,204)", or n/a. */
    private static String cell(JsonObject ratios, String name, int digits) {
        JsonObject r = obj(ratios, name);
        return r == null || r.getValue("value") == null ? "n/a" : fmt(r.getDouble("value"), 2) + " ("
                + fmt(r.getDouble("numerator"), digits) + " ÷ " + fmt(r.getDouble("denominator"), digits) + ")";
    }

    /** The comparison services' names, in order, after idem's when asked. */
    private static List<String> names(JsonObject comparison, boolean withIdem) {
        List<String> names = new ArrayList<>(withIdem ? List.of("idem") : List.of());
        comparison.getJsonArray("peers", new JsonArray()).forEach(n -> names.add(String.valueOf(n)));
        return names;
    }

    private static JsonObject service(JsonObject comparison, String name) {
        JsonObject service = obj(obj(comparison, "services"), name);
        return service == null ? new JsonObject().put("name", name) : service;
    }

    private static List<Figure> served(JsonObject service) {
        List<String> kinds = List.of(service.getString("kinds", "").split("\\+"));
        return FIGURES.stream().filter(f -> kinds.contains(f.kind()) && !steps(service, f).isEmpty()).toList();
    }

    private static boolean cpuKnown(JsonObject service) {
        return service.getLong("servicePid", 0L) > 0;
    }

    private static JsonArray steps(JsonObject service, Figure figure) {
        JsonObject figures = obj(service, figure.part());
        return figures == null ? new JsonArray() : figures.getJsonArray("steps", new JsonArray());
    }

    private static Double best(JsonArray steps) {
        var best = steps.stream().mapToDouble(o -> ((JsonObject) o).getDouble("perSecond", 0.0)).max();
        return best.isPresent() ? best.getAsDouble() : null;
    }
}
