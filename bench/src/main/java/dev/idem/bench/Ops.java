package dev.idem.bench;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The requests of the benchmark, as a gateway and an API client send them. Every op runs on the
 * load's one context, so the shared cursors need no locking.
 */
final class Ops {

    /** An order the bench created: its Idempotency-Key index, id and amount. */
    record Order(int key, String id, long amountCents) {}

    /** Orders of one user, in creation order, with a cursor over those not yet paid. */
    static final class Pool {
        final String user;
        final List<Order> orders = new ArrayList<>();
        int nextKey;
        int paid;

        Pool(String user) {
            this.user = user;
        }

        int unpaid() {
            return orders.size() - paid;
        }
    }

    /** A callback's body with the timestamp and signature it goes out with. */
    record Signed(byte[] body, long timestamp, String signature) {}

    /** Well inside the service's accepted window (300 s by default) for a step of any length. */
    private static final long RESIGN_AFTER_SECONDS = 60;

    private final Mac mac;
    private final String paidAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();

    Ops(String secret) {
        try {
            mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static long amountOf(int key) {
        return 100 + (key * 7919L) % 9900;
    }

    /** null when the answer has {@code status}, else what it had instead; then {@code check}'s verdict on it. */
    private static Future<String> expect(Future<HttpResponse<Buffer>> sent, int status,
                                         Function<HttpResponse<Buffer>, String> check) {
        return sent.map(r -> r.statusCode() != status ? "status " + r.statusCode() + " " + code(r) : check.apply(r));
    }

    /** POST /api/orders with a new Idempotency-Key, up to {@code limit} keys (-1: no limit); the order joins the pool. */
    Load.Op createOrders(Pool pool, int limit) {
        return client -> {
            if (limit >= 0 && pool.nextKey >= limit) {
                return null;
            }
            int key = pool.nextKey++;
            return expect(submit(client, pool.user, key), 201, r -> {
                if (r.getHeader("Idempotent-Replayed") != null) {
                    return "a new key was answered as a replay";
                }
                pool.orders.add(new Order(key, orderId(r), amountOf(key)));
                return null;
            });
        };
    }

    /** The same key and body again, round robin over the first {@code upTo} orders: the stored answer, marked as a replay. */
    Load.Op replayOrders(Pool pool, int upTo) {
        int[] cursor = {0};
        return client -> {
            if (upTo == 0) {
                return null;
            }
            Order order = pool.orders.get(cursor[0]++ % upTo);
            return expect(submit(client, pool.user, order.key()), 201,
                    r -> !"true".equals(r.getHeader("Idempotent-Replayed")) ? "replay without Idempotent-Replayed"
                            : orderId(r).equals(order.id()) ? null : "replay answered another order");
        };
    }

    /** The order id of an answer, whether a string (idem's UUIDs) or a number (a comparison service's serial id). */
    static String orderId(HttpResponse<Buffer> response) {
        JsonObject order = response.bodyAsJsonObject();
        return order == null ? "" : String.valueOf(order.getValue("orderId"));
    }

    static Future<HttpResponse<Buffer>> submit(WebClient client, String user, int key) {
        return client.post("/api/orders").putHeader("Content-Type", "application/json").putHeader("X-User-Id", user)
                .putHeader("Idempotency-Key", "k" + key)
                .sendBuffer(Buffer.buffer("{\"amountCents\":" + amountOf(key) + ",\"currency\":\"CNY\"}"));
    }

    /** The first SUCCESS callback of each unpaid order, in order; {@code sent} sees each order as it goes. */
    Load.Op firstDeliveries(Pool pool, Consumer<Order> sent) {
        return client -> {
            if (pool.paid >= pool.orders.size()) {
                return null;
            }
            Order order = pool.orders.get(pool.paid++);
            if (sent != null) {
                sent.accept(order);
            }
            return expect(callback(client, pool.user, order), 200, r -> {
                String body = r.bodyAsString();
                return body.contains("duplicate") ? "first delivery answered as a duplicate"
                        : body.contains("anomaly") ? "first delivery answered as an anomaly: " + body
                        : body.contains("\"SUCCESS\"") ? null : "unexpected answer " + body;
            });
        };
    }

    /**
     * The paid orders' callbacks again, round robin. The service checks each signature as fully as
     * a fresh one, but each is signed again only once a minute old, not on every delivery: the
     * generator shares the cores with the service, and the bare endpoint costs it no signing.
     */
    Load.Op duplicates(Pool pool) {
        int paid = pool.paid;
        Signed[] signed = new Signed[paid];
        int[] cursor = {0};
        return client -> {
            if (paid == 0) {
                return null;
            }
            int i = cursor[0]++ % paid;
            long now = Instant.now().getEpochSecond();
            if (signed[i] == null || now - signed[i].timestamp() > RESIGN_AFTER_SECONDS) {
                signed[i] = signed(pool.user, pool.orders.get(i), now);
            }
            return expect(send(client, signed[i]), 200,
                    r -> r.bodyAsString().contains("\"duplicate\":true") ? null : "duplicate not recognised");
        };
    }

    /** GET /bench/redis-get: one Redis GET behind the same HTTP stack. */
    Load.Op bare() {
        return client -> expect(client.get("/bench/redis-get").send(), 200, r -> null);
    }

    static String tradeNo(String user, Order order) {
        return user + "-t" + order.key();
    }

    String callbackBody(String user, Order order) {
        return "{\"tradeNo\":\"" + tradeNo(user, order) + "\",\"orderId\":\"" + order.id() + "\",\"amountCents\":"
                + order.amountCents() + ",\"status\":\"SUCCESS\",\"paidAt\":\"" + paidAt + "\"}";
    }

    /** Signed with HMAC-SHA256(secret, timestamp + "." + raw body), lowercase hex. */
    Signed signed(String user, Order order, long timestamp) {
        byte[] body = callbackBody(user, order).getBytes(StandardCharsets.UTF_8);
        mac.update((timestamp + ".").getBytes(StandardCharsets.US_ASCII));
        mac.update(body);
        return new Signed(body, timestamp, HexFormat.of().formatHex(mac.doFinal()));
    }

    Future<HttpResponse<Buffer>> callback(WebClient client, String user, Order order) {
        return send(client, signed(user, order, Instant.now().getEpochSecond()));
    }

    static Future<HttpResponse<Buffer>> send(WebClient client, Signed callback) {
        return client.post("/api/payments/callback").putHeader("Content-Type", "application/json")
                .putHeader("X-Pay-Timestamp", Long.toString(callback.timestamp()))
                .putHeader("X-Pay-Signature", callback.signature()).sendBuffer(Buffer.buffer(callback.body()));
    }

    static String code(HttpResponse<Buffer> response) {
        try {
            JsonObject problem = response.bodyAsJsonObject();
            return problem == null ? "" : problem.getString("code", "");
        } catch (RuntimeException notJson) {
            return "";
        }
    }
}
