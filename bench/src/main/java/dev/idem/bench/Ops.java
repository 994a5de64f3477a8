package dev.idem.bench;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The requests of the benchmark, as a gateway and an API client send them. Every op runs on the
 * load's single event loop, so the shared cursors need no locking.
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

    private final Mac mac;
    private final String paidAt;

    Ops(String secret) {
        try {
            mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        paidAt = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    }

    static long amountOf(int key) {
        return 100 + (key * 7919L) % 9900;
    }

    static String orderBody(int key) {
        return "{\"amountCents\":" + amountOf(key) + ",\"currency\":\"CNY\"}";
    }

    /** POST /api/orders with a new Idempotency-Key; the order joins the pool. */
    Load.Op createOrders(Pool pool, int limit) {
        return client -> {
            if (limit >= 0 && pool.nextKey >= limit) {
                return null;
            }
            int key = pool.nextKey++;
            return submit(client, pool.user, key).map(response -> {
                if (response.statusCode() != 201) {
                    return "status " + response.statusCode() + " " + code(response);
                }
                if (response.getHeader("Idempotent-Replayed") != null) {
                    return "a new key was answered as a replay";
                }
                pool.orders.add(new Order(key, response.bodyAsJsonObject().getString("orderId"), amountOf(key)));
                return null;
            });
        };
    }

    /** The same key and body again: the stored answer, marked as a replay. */
    Load.Op replayOrders(Pool pool, int upTo) {
        int[] cursor = {0};
        return client -> {
            if (upTo == 0) {
                return null;
            }
            Order order = pool.orders.get(cursor[0]++ % upTo);
            return submit(client, pool.user, order.key()).map(response -> {
                if (response.statusCode() != 201) {
                    return "status " + response.statusCode() + " " + code(response);
                }
                if (!"true".equals(response.getHeader("Idempotent-Replayed"))) {
                    return "replay without Idempotent-Replayed";
                }
                return response.bodyAsString().contains(order.id()) ? null : "replay answered another order";
            });
        };
    }

    static Future<HttpResponse<Buffer>> submit(WebClient client, String user, int key) {
        return client.post("/api/orders")
                .putHeader("Content-Type", "application/json")
                .putHeader("X-User-Id", user)
                .putHeader("Idempotency-Key", "k" + key)
                .sendBuffer(Buffer.buffer(orderBody(key)));
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
            return callback(client, pool.user, order).map(response -> {
                if (response.statusCode() != 200) {
                    return "status " + response.statusCode() + " " + code(response);
                }
                String body = response.bodyAsString();
                if (body.contains("duplicate")) {
                    return "first delivery answered as a duplicate";
                }
                if (body.contains("anomaly")) {
                    return "first delivery answered as an anomaly: " + body;
                }
                return body.contains("\"SUCCESS\"") ? null : "unexpected answer " + body;
            });
        };
    }

    /** The paid orders' callbacks again, round robin, each signed afresh as a gateway retry is. */
    Load.Op duplicates(Pool pool) {
        int paid = pool.paid;
        int[] cursor = {0};
        return client -> {
            if (paid == 0) {
                return null;
            }
            Order order = pool.orders.get(cursor[0]++ % paid);
            return callback(client, pool.user, order).map(response -> {
                if (response.statusCode() != 200) {
                    return "status " + response.statusCode() + " " + code(response);
                }
                return response.bodyAsString().contains("\"duplicate\":true") ? null : "duplicate not recognised";
            });
        };
    }

    /** GET /bench/redis-get: one Redis GET behind the same HTTP stack. */
    Load.Op bare() {
        return client -> client.get("/bench/redis-get").send()
                .map(response -> response.statusCode() == 200 ? null
                        : "status " + response.statusCode() + " " + code(response));
    }

    static String tradeNo(String user, Order order) {
        return user + "-t" + order.key();
    }

    String callbackBody(String user, Order order) {
        return "{\"tradeNo\":\"" + tradeNo(user, order) + "\",\"orderId\":\"" + order.id() + "\",\"amountCents\":"
                + order.amountCents() + ",\"status\":\"SUCCESS\",\"paidAt\":\"" + paidAt + "\"}";
    }

    Future<HttpResponse<Buffer>> callback(WebClient client, String user, Order order) {
        byte[] body = callbackBody(user, order).getBytes(StandardCharsets.UTF_8);
        long timestamp = Instant.now().getEpochSecond();
        return client.post("/api/payments/callback")
                .putHeader("Content-Type", "application/json")
                .putHeader("X-Pay-Timestamp", Long.toString(timestamp))
                .putHeader("X-Pay-Signature", sign(timestamp, body))
                .sendBuffer(Buffer.buffer(body));
    }

    /** Lowercase hex of HMAC-SHA256(secret, timestamp + "." + raw body). */
    String sign(long timestamp, byte[] body) {
        mac.update((timestamp + ".").getBytes(StandardCharsets.US_ASCII));
        mac.update(body);
        return HexFormat.of().formatHex(mac.doFinal());
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
