package dev.idem.testing;

import io.restassured.RestAssured;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/** Many real clients at once: requests in flight together over many connections. */
public final class Http {

    public record Answer(int status, String body, String replayed) {}

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    public static URI uri(String path) {
        return URI.create("http://localhost:" + RestAssured.port + path);
    }

    public static HttpRequest.Builder post(String path, String body) {
        return HttpRequest.newBuilder(uri(path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
    }

    /**
     * Sends every request with at most {@code concurrency} in flight; each is built just before it
     * leaves (so signatures are fresh). {@code midway} runs once, when half of them were answered.
     * Answers come back in the order of {@code requests}.
     */
    public List<Answer> all(List<Supplier<HttpRequest>> requests, int concurrency, Runnable midway) {
        Semaphore slots = new Semaphore(concurrency);
        AtomicInteger answered = new AtomicInteger();
        int half = requests.size() / 2;
        List<CompletableFuture<Answer>> futures = new ArrayList<>();
        for (Supplier<HttpRequest> request : requests) {
            slots.acquireUninterruptibly();
            futures.add(client.sendAsync(request.get(), HttpResponse.BodyHandlers.ofString())
                    .thenApply(r -> new Answer(r.statusCode(), r.body(),
                            r.headers().firstValue("Idempotent-Replayed").orElse(null)))
                    .whenComplete((r, e) -> {
                        slots.release();
                        if (answered.incrementAndGet() == half && midway != null) {
                            midway.run();
                        }
                    }));
        }
        List<Answer> answers = new ArrayList<>();
        for (CompletableFuture<Answer> future : futures) {
            try {
                answers.add(future.get(120, TimeUnit.SECONDS));
            } catch (Exception e) {
                throw new AssertionError("a request failed without an answer", e);
            }
        }
        return answers;
    }
}
