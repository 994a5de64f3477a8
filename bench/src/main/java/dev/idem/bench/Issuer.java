package dev.idem.bench;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The fault suite's external coupon issuer, for idem's two-phase mode: {@code POST /coupons} with
 * {@code Idempotency-Key} answers, after {@code --delay-ms}, the coupon id it issued for that key
 * the first time (a new one otherwise), as the other side of a two-phase effect deduplicates.
 * {@code GET /stats}: keys issued and calls served, for the accounts.
 * <pre>  issuer --port PORT [--delay-ms 300]</pre>
 */
final class Issuer {

    private Issuer() {}

    static void run(Args args) throws Exception {
        long delay = (long) args.number("delay-ms", 300);
        Map<String, String> issued = new ConcurrentHashMap<>();
        AtomicLong calls = new AtomicLong();
        Vertx vertx = Vertx.vertx();
        vertx.createHttpServer().requestHandler(request -> {
            if (request.path().equals("/stats")) {
                request.response().putHeader("Content-Type", "application/json")
                        .end(new JsonObject().put("keys", issued.size()).put("calls", calls.get()).encode());
                return;
            }
            String key = request.getHeader("Idempotency-Key");
            if (!request.path().equals("/coupons") || key == null) {
                request.response().setStatusCode(400).end();
                return;
            }
            calls.incrementAndGet();
            String couponId = issued.computeIfAbsent(key, k -> "issuer-" + UUID.randomUUID());
            vertx.setTimer(Math.max(1, delay), t -> request.response().putHeader("Content-Type", "application/json")
                    .end(new JsonObject().put("couponId", couponId).encode()));
        }).listen(args.integer("port"), "127.0.0.1").toCompletionStage().toCompletableFuture().get();
        System.out.println("issuer: 127.0.0.1:" + args.integer("port") + ", answers after " + delay + " ms");
        Thread.currentThread().join();
    }
}
