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
 * the settings) and one {@code compare-<name>.json} per service ({@link Compare}).
 */
final class Comparison {

    /** One figure: its part in a service's JSON, its label, and the kind of service that serves it. */
    private record Figure(String part, String label, String kind) {}

    private static final List<Figure> FIGURES = List.of(
            new Figure("callbacksFirst", "first-delivery callbacks", "callbacks"),
            new Figure("duplicates", "duplicate deliveries", "callbacks"),
            new Figure("keyFirst", "Idempotency-Key first executions", "keys"),
            new Figure("keyReplay", "Idempotency-Key replays", "keys"));

    private static final String IDEM = "idem";

    private Comparison() {}

    /** The comparison of the run in {@code dir}, with every service's figures; null when it had none. */
    static JsonObject load(Path dir) throws IOException {
        Path index = dir.resolve("compare.json");
        if (!Files.exists(index)) {
            return null;
        }
        JsonObject comparison = new JsonObject(Files.readString(index));
        JsonObject services = new JsonObject();
        List<String> names = new ArrayList<>(peers(comparison));
        names.add(0, IDEM);
        for (String name : names) {
            Path file = dir.resolve("compare-" + name + ".json");
            services.put(name, Files.exists(file) ? new JsonObject(Files.readString(file))
                    : new JsonObject().put("name", name).put("error", "no figures (see the run's log)"));
        }
        return comparison.put("services", services);
    }

    /**
     * idem ÷ each peer: for every figure the peer serves, the ratios at each concurrency both
     * reached (throughput, p50, p99, Postgres and service CPU per request) and of the best steps.
     */
    static JsonObject ratios(JsonObject comparison) {
        JsonObject all = new JsonObject();
        JsonObject idem = service(comparison, IDEM);
        for (String name : peers(comparison)) {
            JsonObject peer = service(comparison, name);
            JsonObject figures = new JsonObject();
            for (Figure figure : served(peer)) {
                JsonArray a = steps(idem, figure);
                JsonArray b = steps(peer, figure);
                JsonArray byConcurrency = new JsonArray();
                for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
                    byConcurrency.add(stepRatios(a.getJsonObject(i), b.getJsonObject(i), cpuKnown(idem), cpuKnown(peer)));
                }
                figures.put(figure.part(), byConcurrency)
                        .put(figure.part() + "Best", ratio(best(a), best(b), null));
            }
            all.put(name, figures);
        }
        return all;
    }

    private static JsonObject stepRatios(JsonObject a, JsonObject b, boolean aCpu, boolean bCpu) {
        return new JsonObject().put("concurrency", a.getInteger("concurrency"))
                .put("perSecond", ratio(a.getDouble("perSecond"), b.getDouble("perSecond"), null))
                .put("p50Ms", ratio(a.getDouble("p50Ms"), b.getDouble("p50Ms"), null))
                .put("p99Ms", ratio(a.getDouble("p99Ms"), b.getDouble("p99Ms"), null))
                .put("postgresMsPerRequest", ratio(msPerRequest(a, "postgres", true),
                        msPerRequest(b, "postgres", true), null))
                .put("serviceMsPerRequest", ratio(msPerRequest(a, "service", aCpu), msPerRequest(b, "service", bCpu), null));
    }

    /** CPU milliseconds of a group of processes per answered request during a step; null when unknown. */
    private static Double msPerRequest(JsonObject step, String group, boolean known) {
        JsonObject cores = obj(step, "cores");
        double rate = step.getDouble("perSecond", 0.0);
        if (!known || cores == null || rate <= 0) {
            return null;
        }
        return Load.round(cores.getDouble(group, 0.0) * 1000 / rate, 4);
    }

    /** The table's section: how each service ran, then one table per peer. */
    static void table(JsonObject comparison, JsonObject ratios, Consumer<String> line) {
        line.accept("");
        line.accept("Comparison services, one at a time, each on what it serves, after the same warm-up (callbacks "
                + fmt(comparison.getDouble("warmupCallbacksSeconds"), 0) + " s, Idempotency-Key "
                + fmt(comparison.getDouble("warmupKeysSeconds"), 0) + " s), then " + comparison.getValue("stepSeconds")
                + " s at each c, driven by the same load generator; a ratio is idem ÷ the service (above 1 favours idem"
                + " for req/s, below 1 for latencies and CPU):");
        line.accept("");
        List<String> names = new ArrayList<>(peers(comparison));
        names.add(0, IDEM);
        for (String name : names) {
            line.accept("- " + about(service(comparison, name)));
        }
        JsonObject idem = service(comparison, IDEM);
        for (String name : peers(comparison)) {
            JsonObject peer = service(comparison, name);
            JsonObject figures = obj(ratios, name);
            if (served(peer).isEmpty() || figures == null) {
                continue;
            }
            line.accept("");
            line.accept("| idem ÷ " + name + " | c | req/s | p50 ms | p99 ms | Postgres CPU ms/request"
                    + " | service CPU ms/request | load generator cores (busiest thread): idem; " + name + " |");
            line.accept("|---|---:|---:|---:|---:|---:|---:|---|");
            for (Figure figure : served(peer)) {
                JsonArray a = steps(idem, figure);
                JsonArray b = steps(peer, figure);
                JsonArray byConcurrency = figures.getJsonArray(figure.part(), new JsonArray());
                for (int i = 0; i < byConcurrency.size(); i++) {
                    JsonObject r = byConcurrency.getJsonObject(i);
                    line.accept("| " + figure.label() + " | " + r.getInteger("concurrency") + " | "
                            + cell(r, "perSecond", 0) + " | " + cell(r, "p50Ms", 2) + " | " + cell(r, "p99Ms", 2) + " | "
                            + cell(r, "postgresMsPerRequest", 3) + " | " + cell(r, "serviceMsPerRequest", 3) + " | "
                            + load(a.getJsonObject(i)) + "; " + load(b.getJsonObject(i)) + " |");
                }
                line.accept("| " + figure.label() + " | best | " + cell(figures, figure.part() + "Best", 0)
                        + " |  |  |  |  |  |");
            }
        }
        line.accept("");
        notes(comparison, names).forEach(line);
    }

    /** How a service ran: where, whether the bench started it on a fresh database, what it served. */
    private static String about(JsonObject service) {
        String name = service.getString("name");
        String where = name + (IDEM.equals(name) ? "" : " (" + service.getString("url") + ")") + ": ";
        if (service.getString("error") != null && service.getJsonArray("kinds") == null) {
            return where + "not measured: " + service.getString("error");
        }
        String how = service.getBoolean("startedByBench", false)
                ? "started by the bench on a fresh database (" + dbName(service.getString("freshDatabase")) + ")"
                : "used as it runs: its database is not fresh";
        List<String> kinds = kinds(service);
        String serves = kinds.isEmpty() ? "serves nothing the comparison measures"
                : "measured on " + String.join(" and ", kinds) + (IDEM.equals(name) ? " (what the others were measured on)"
                        : service.getBoolean("kindsDetected", false) ? " (detected)" : " (as configured)");
        String cpu = cpuKnown(service) ? "" : "; its process is not known here, so its CPU is n/a";
        String error = service.getString("error") == null ? "" : "; FAILED: " + service.getString("error");
        return where + how + ", " + serves + cpu + error;
    }

    private static String dbName(String jdbcUrl) {
        return jdbcUrl == null ? "?" : jdbcUrl.substring(jdbcUrl.lastIndexOf('/') + 1);
    }

    /**
     * Whether the load generator capped any step: the steps it ran again with more event loops, and
     * the kept ones where it still was at the cap, else how busy its busiest thread was at most;
     * and the steps that ran out of unpaid orders before their time (shorter, still per second).
     */
    private static List<String> notes(JsonObject comparison, List<String> names) {
        double busiest = 0;
        List<String> raised = new ArrayList<>();
        List<String> capped = new ArrayList<>();
        List<String> exhausted = new ArrayList<>();
        boolean measured = false;
        for (String name : names) {
            JsonObject service = service(comparison, name);
            for (Figure figure : FIGURES) {
                for (Object o : steps(service, figure)) {
                    JsonObject step = (JsonObject) o;
                    measured = true;
                    double thread = obj(step, "cores") == null ? 0
                            : obj(step, "cores").getDouble(Proc.LOAD_BUSIEST_THREAD, 0.0);
                    busiest = Math.max(busiest, thread);
                    String where = name + " " + figure.label() + " c=" + step.getInteger("concurrency");
                    JsonArray tries = step.getJsonArray("loadTries");
                    if (tries != null) {
                        raised.add(where + ": " + tries(tries));
                    }
                    if (thread >= Compare.SATURATED) {
                        capped.add(where);
                    }
                    if (step.getBoolean("exhausted", false)) {
                        exhausted.add(where + " (" + fmt(step.getDouble("seconds"), 1) + " s)");
                    }
                }
            }
        }
        List<String> notes = new ArrayList<>();
        if (!measured) {
            return notes;
        }
        notes.add(raised.isEmpty()
                ? "The load generator was never the cap: its busiest thread took at most " + fmt(busiest, 2)
                        + " core in a step (above " + fmt(Compare.SATURATED, 2) + " a step runs again with more event loops)."
                : "The load generator was the cap of some steps, which ran again with more event loops, the faster try"
                        + " kept (a try also warmed the service a little longer): " + String.join("; ", raised) + ".");
        if (!capped.isEmpty()) {
            notes.add("Still at the cap with the most loops (those figures are floors): " + String.join(", ", capped) + ".");
        }
        if (!exhausted.isEmpty()) {
            notes.add("Ran out of unpaid orders before the step's time (a shorter step): " + String.join(", ", exhausted) + ".");
        }
        return notes;
    }

    private static String tries(JsonArray tries) {
        StringBuilder all = new StringBuilder();
        for (Object o : tries) {
            JsonObject t = (JsonObject) o;
            all.append(all.length() == 0 ? "" : " → ").append(t.getValue("loops")).append(" loop(s) ")
                    .append(fmt(t.getDouble("perSecond"), 0)).append("/s (busiest thread ")
                    .append(fmt(t.getDouble("busiestThreadCores"), 2)).append(")");
        }
        return all.toString();
    }

    private static String load(JsonObject step) {
        JsonObject cores = obj(step, "cores");
        if (cores == null) {
            return "n/a";
        }
        int loops = step.getInteger("loadLoops", 1);
        return fmt(cores.getDouble("loadGenerator"), 2) + " (" + fmt(cores.getDouble(Proc.LOAD_BUSIEST_THREAD, 0.0), 2)
                + ")" + (loops > 1 ? " " + loops + " loops" : "");
    }

    /** "0.55 (1,752 ÷ 3,204)", or n/a. */
    private static String cell(JsonObject ratios, String name, int digits) {
        JsonObject r = obj(ratios, name);
        if (r == null || r.getValue("value") == null) {
            return "n/a";
        }
        return fmt(r.getDouble("value"), 2) + " (" + fmt(r.getDouble("numerator"), digits) + " ÷ "
                + fmt(r.getDouble("denominator"), digits) + ")";
    }

    private static List<String> peers(JsonObject comparison) {
        List<String> names = new ArrayList<>();
        comparison.getJsonArray("peers", new JsonArray()).forEach(n -> names.add(String.valueOf(n)));
        return names;
    }

    private static JsonObject service(JsonObject comparison, String name) {
        JsonObject service = obj(obj(comparison, "services"), name);
        return service == null ? new JsonObject().put("name", name) : service;
    }

    private static List<String> kinds(JsonObject service) {
        List<String> kinds = new ArrayList<>();
        service.getJsonArray("kinds", new JsonArray()).forEach(k -> kinds.add(String.valueOf(k)));
        return kinds;
    }

    private static List<Figure> served(JsonObject service) {
        List<String> kinds = kinds(service);
        return FIGURES.stream().filter(f -> kinds.contains(f.kind())).toList();
    }

    private static boolean cpuKnown(JsonObject service) {
        return service.getLong("servicePid", 0L) > 0;
    }

    private static JsonArray steps(JsonObject service, Figure figure) {
        JsonObject figures = obj(service, figure.part());
        return figures == null ? new JsonArray() : figures.getJsonArray("steps", new JsonArray());
    }

    private static Double best(JsonArray steps) {
        Double best = null;
        for (Object o : steps) {
            double rate = ((JsonObject) o).getDouble("perSecond", 0.0);
            best = best == null ? rate : Math.max(best, rate);
        }
        return best;
    }
}
