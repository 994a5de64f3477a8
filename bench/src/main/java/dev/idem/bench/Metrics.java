package dev.idem.bench;

import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/** The service's own counters ({@code /q/metrics}), to tell which layer answered during a phase. */
final class Metrics {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final int port;

    Metrics(int port) {
        this.port = port;
    }

    /** Every {@code idem_*_total} series and its value; empty when the endpoint does not answer. */
    Map<String, Double> snapshot() {
        Map<String, Double> series = new TreeMap<>();
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/q/metrics")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            for (String line : response.body().split("\n")) {
                if (!line.startsWith("idem_") || !line.contains("_total")) {
                    continue;
                }
                // a traced increment's exemplar (" # {trace_id=…} 1.0 …") follows the value
                int exemplar = line.indexOf(" # ");
                if (exemplar >= 0) {
                    line = line.substring(0, exemplar);
                }
                int space = line.lastIndexOf(' ');
                try {
                    series.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
                } catch (RuntimeException ignored) {
                    // not a sample line
                }
            }
        } catch (Exception e) {
            Progress.say("metrics unavailable: " + e);
        }
        return series;
    }

    /** What grew between two snapshots. */
    static JsonObject delta(Map<String, Double> before, Map<String, Double> after) {
        JsonObject delta = new JsonObject();
        after.forEach((name, value) -> {
            double grown = value - before.getOrDefault(name, 0.0);
            if (grown > 0) {
                delta.put(name, (long) grown);
            }
        });
        return delta;
    }

    /** The sum of the series of one metric whose labels contain every given {@code label="value"}. */
    static long sum(JsonObject delta, String metric, String... labels) {
        long total = 0;
        for (String name : delta.fieldNames()) {
            if (!name.startsWith(metric + "{")) {
                continue;
            }
            boolean all = true;
            for (String label : labels) {
                all &= name.contains(label);
            }
            if (all) {
                total += delta.getLong(name);
            }
        }
        return total;
    }
}
