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

    /** Well inside the service's accepted window (300 s by default) for a step of any length. */
    private static final long RESIGN_AFTER_SECONDS = 60;

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
                pool.orders.add(new Order(key, orderId(response), amountOf(key)));
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
                return orderId(response).equals(order.id()) ? null : "replay answered another order";
            });
        };
    }

    /**
     * The order id of an answer, whether the service sends it as a string (idem's UUIDs) or as a
     * number (a comparison service's serial id): compared whole, since a short number also stands
     * inside other members.
     */
    static String orderId(HttpResponse<Buffer> response) {
        JsonObject order = response.bodyAsJsonObject();
        return order == null ? "" : String.valueOf(order.getValue("orderId"));
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

    /**
     * The paid orders' callbacks again, round robin. The service checks each signature as fully as
     * a fresh one, but each order's callback is signed again only once its signature is a minute
     * old, not on every delivery: the generator shares the two cores with the service, and the
     * bare endpoint it is compared with costs the generator no signing.
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
            return send(client, signed[i]).map(response -> {
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

    /** A callback's body with the timestamp and signature it goes out with. */
    record Signed(byte[] body, long timestamp, String signature) {}

    Signed signed(String user, Order order, long timestamp) {
        byte[] body = callbackBody(user, order).getBytes(StandardCharsets.UTF_8);
        return new Signed(body, timestamp, sign(timestamp, body));
    }

    Future<HttpResponse<Buffer>> callback(WebClient client, String user, Order order) {
        return send(client, signed(user, order, Instant.now().getEpochSecond()));
    }

    static Future<HttpResponse<Buffer>> send(WebClient client, Signed callback) {
        return client.post("/api/payments/callback")
                .putHeader("Content-Type", "application/json")
                .putHeader("X-Pay-Timestamp", Long.toString(callback.timestamp()))
                .putHeader("X-Pay-Signature", callback.signature())
                .sendBuffer(Buffer.buffer(callback.body()));
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
