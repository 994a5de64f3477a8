package dev.idem.bench;

import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/** The service's own counters ({@code /q/metrics}), to tell which layer answered during a phase. */
final class Metrics {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final URI endpoint;

    Metrics(URI service) {
        this.endpoint = service.resolve("/q/metrics");
    }

    /** Every {@code idem_*_total} series and its value; empty when the endpoint does not answer (a comparison service). */
    Map<String, Double> snapshot() {
        Map<String, Double> series = new TreeMap<>();
        try {
            String body = HTTP.send(HttpRequest.newBuilder(endpoint).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            for (String line : body.split("\n")) {
                // a traced increment's exemplar (" # {trace_id=…} 1.0 …") follows the value
                String[] sample = line.split(" # ")[0].split(" (?=[^ ]+$)");
                if (line.startsWith("idem_") && line.contains("_total") && sample.length == 2) {
                    series.put(sample[0], Double.parseDouble(sample[1]));
                }
            }
        } catch (Exception e) {
            // no figures of the service's own
        }
        return series;
    }

    /** What grew between two snapshots. */
    static JsonObject delta(Map<String, Double> before, Map<String, Double> after) {
        JsonObject delta = new JsonObject();
        after.forEach((name, value) -> {
            if (value > before.getOrDefault(name, 0.0)) {
                delta.put(name, (long) (value - before.getOrDefault(name, 0.0)));
            }
        });
        return delta;
    }

    /** The sum of the series of one metric whose labels contain every given {@code label="value"}. */
    static long sum(JsonObject delta, String metric, String... labels) {
        return delta.fieldNames().stream().filter(n -> n.startsWith(metric + "{") && Stream.of(labels).allMatch(n::contains))
                .mapToLong(delta::getLong).sum();
    }
}
