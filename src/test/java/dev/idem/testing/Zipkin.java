package dev.idem.testing;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/** The Zipkin server `./idem services tracing` runs, read through its API as its UI does. */
public final class Zipkin {

    public static final String BASE = "http://127.0.0.1:9411";
    public static final String SPANS = BASE + "/api/v2/spans";

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private Zipkin() {
    }

    /** The {@code n}-th span named {@code name} in the trace, once Zipkin has it (spans are sent in batches). */
    public static JsonObject span(String traceId, String name, int n) {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
        while (true) {
            Optional<JsonObject> found = trace(traceId).stream().map(JsonObject.class::cast)
                    .filter(s -> name.equals(s.getString("name"))).skip(n - 1).findFirst();
            if (found.isPresent()) {
                return found.get();
            }
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("no span '" + name + "' in trace " + traceId + ": " + trace(traceId).encode());
            }
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** The spans of a trace Zipkin holds; none yet: empty. */
    public static JsonArray trace(String traceId) {
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(BASE + "/api/v2/trace/" + traceId))
                    .build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? new JsonArray(response.body()) : new JsonArray();
        } catch (IOException | InterruptedException e) {
            throw new AssertionError("Zipkin does not answer at " + BASE + " (./idem services tracing)", e);
        }
    }

    /** Whether {@code ancestor} is {@code span}'s parent, or its parent's, and so on, in the trace. */
    public static boolean descends(JsonArray trace, JsonObject span, JsonObject ancestor) {
        String parent = span.getString("parentId");
        while (parent != null) {
            if (parent.equals(ancestor.getString("id"))) {
                return true;
            }
            String id = parent;
            parent = trace.stream().map(JsonObject.class::cast).filter(s -> id.equals(s.getString("id"))).findFirst()
                    .map(s -> s.getString("parentId")).orElse(null);
        }
        return false;
    }

    /** A W3C traceparent header of a new sampled trace whose id is {@code traceId}. */
    public static String traceparent(String traceId) {
        return "00-" + traceId + "-" + HexFormat.of().formatHex(random(8)) + "-01";
    }

    public static String newTraceId() {
        return HexFormat.of().formatHex(random(16));
    }

    private static byte[] random(int n) {
        byte[] bytes = new byte[n];
        ThreadLocalRandom.current().nextBytes(bytes);
        return bytes;
    }
}
