package dev.idem.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An external coupon issuer on loopback, over real HTTP: {@code POST /coupons} with
 * {@code {"key","userId","templateId"}} and {@code Idempotency-Key}, answered
 * {@code {"couponId"}}. Like a real API it deduplicates by Idempotency-Key: a repeated call answers
 * the coupon issued the first time. It counts calls and issues per key, and can be switched (for
 * every key or one) to fail (503), to hang (it issues, then holds its answer until released) or to
 * succeed.
 */
public final class FakeCouponIssuer implements AutoCloseable {

    public enum Mode { SUCCEED, FAIL, HANG }

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final Map<String, Mode> modeOfKey = new ConcurrentHashMap<>();
    private final Map<String, String> issued = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> issues = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private volatile Mode mode = Mode.SUCCEED;
    private volatile CountDownLatch release = new CountDownLatch(1);

    public FakeCouponIssuer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(threads);
        server.createContext("/coupons", this::handle);
        server.start();
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/coupons";
    }

    public void mode(Mode mode) {
        this.mode = mode;
    }

    /** {@code key} answers in {@code mode} whatever the others do. */
    public void mode(String key, Mode mode) {
        modeOfKey.put(key, mode);
    }

    /** Every held answer goes out now; later HANG calls hold again. */
    public void releaseHung() {
        CountDownLatch held = release;
        release = new CountDownLatch(1);
        held.countDown();
    }

    /** Back to succeeding for every key; what was issued stays issued. */
    public void reset() {
        releaseHung();
        modeOfKey.clear();
        mode = Mode.SUCCEED;
    }

    /** As if a call for {@code key} had been made and issued before (by a process that then died). */
    public String issueWithoutCall(String key) {
        return issue(key);
    }

    public int calls(String key) {
        AtomicInteger count = calls.get(key);
        return count == null ? 0 : count.get();
    }

    /** Coupons issued for {@code key}: never more than one, since the issuer deduplicates. */
    public int issues(String key) {
        AtomicInteger count = issues.get(key);
        return count == null ? 0 : count.get();
    }

    public String couponId(String key) {
        return issued.get(key);
    }

    private String issue(String key) {
        return issued.computeIfAbsent(key, k -> {
            issues.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet();
            return "EXT-" + UUID.randomUUID();
        });
    }

    private void handle(HttpExchange exchange) throws IOException {
        try {
            String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
            JsonObject body;
            try {
                body = new JsonObject(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            } catch (RuntimeException unreadable) {
                body = new JsonObject();
            }
            if (!"POST".equals(exchange.getRequestMethod()) || key == null || !key.equals(body.getString("key"))
                    || body.getString("userId") == null || body.getString("templateId") == null) {
                answer(exchange, 400, new JsonObject().put("error", "bad request"));
                return;
            }
            calls.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            Mode now = modeOfKey.getOrDefault(key, mode);
            if (now == Mode.FAIL) {
                answer(exchange, 503, new JsonObject().put("error", "issuer unavailable"));
                return;
            }
            String couponId = issue(key);
            if (now == Mode.HANG) {
                awaitRelease();
            }
            answer(exchange, 200, new JsonObject().put("couponId", couponId));
        } finally {
            exchange.close();
        }
    }

    private void awaitRelease() {
        try {
            release.await(5, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void answer(HttpExchange exchange, int status, JsonObject body) throws IOException {
        byte[] bytes = body.encode().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        try {
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        } catch (IOException clientGone) {
            // the caller timed out and left: its answer goes nowhere, like a real one would
        }
    }

    @Override
    public void close() {
        releaseHung();
        server.stop(0);
        threads.shutdownNow();
    }

    /** Starts the issuer before the service and points {@code idem.coupon-issuer.url} at it. */
    public static class Resource implements QuarkusTestResourceLifecycleManager {

        private static volatile FakeCouponIssuer issuer;

        public static FakeCouponIssuer issuer() {
            return issuer;
        }

        @Override
        public Map<String, String> start() {
            try {
                issuer = new FakeCouponIssuer();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return Map.of("idem.coupon-issuer.url", issuer.url());
        }

        @Override
        public void stop() {
            issuer.close();
        }
    }
}
