package dev.idem.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpRequest;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A payment gateway's own API on loopback, over real HTTP: the trades it knows (paid, unpaid,
 * closed; an order it never saw is unknown to it) and the query that asks about one. A payment is
 * made here and notified once, unless its first notification is dropped, as a gateway that gave
 * up or a firewall would; a dropped notification is never retried. Each gateway's simulator
 * serves it in that gateway's format and signatures ({@link WeChatPaySimulator.Api},
 * {@link AlipaySimulator.Api}). It counts queries per order, the requests whose signature did not
 * verify, and queries of one order that overlapped.
 *
 * <p>It also serves the daily trade bill: a line per trade paid that day (China's time), plus the
 * lines a test adds (refunds, a line repeated), with amounts a test may change, downloaded once
 * from an address the signed answer gives; {@link #tamperBills} makes the gateway's answer or file
 * untrustworthy as that gateway's integrity check would show.
 */
public abstract class GatewayApi implements AutoCloseable {

    public enum State { UNPAID, PAID, CLOSED }

    /** A trade as the gateway keeps it; {@code paidAt} only once paid. */
    public record Trade(String orderId, String tradeNo, long cents, State state, Instant paidAt) {}

    /** A line of the daily trade bill: a payment, or a refund of {@code cents} numbered {@code refundNo}. */
    public record BillLine(boolean refund, String orderId, String tradeNo, long cents, Instant at, String refundNo) {
        public static BillLine payment(String orderId, String tradeNo, long cents, Instant at) {
            return new BillLine(false, orderId, tradeNo, cents, at, "");
        }
    }

    public static final ZoneId GATEWAY_TIME = ZoneId.of("Asia/Shanghai");

    /** One route of the gateway's API besides the query: its answer to a request. */
    protected interface Route {
        Answer answer(HttpExchange exchange, byte[] body) throws IOException;
    }

    /** What one request asked, once its signature verified: the order it is about. */
    protected record Asked(String orderId) {}

    /** An answer: status, headers, body. */
    protected record Answer(int status, Map<String, String> headers, byte[] body) {}

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final Map<String, Trade> trades = new ConcurrentHashMap<>();
    private final Set<String> forged = ConcurrentHashMap.newKeySet();
    private final Map<String, AtomicInteger> queries = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final AtomicInteger overlaps = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private final AtomicInteger dropped = new AtomicInteger();
    private final Random random = new Random(46);
    private final Map<LocalDate, List<BillLine>> addedLines = new ConcurrentHashMap<>();
    private final Map<String, Long> billAmounts = new ConcurrentHashMap<>();
    private final Map<String, byte[]> downloads = new ConcurrentHashMap<>();
    private volatile double dropShare;
    private volatile boolean tampered;

    protected GatewayApi(String path) {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(threads);
        server.createContext(path, this::handle);
        server.start();
    }

    /** {@code http://127.0.0.1:<port>}. */
    public String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** From now on, this share of first notifications is dropped (0.1: one in ten), at random but the same every run. */
    public void dropFirstNotifications(double share) {
        dropShare = share;
    }

    /**
     * The order is paid: the first notification's request, unless it is dropped (empty). The caller
     * sends it; nobody retries a dropped one.
     */
    public Optional<Supplier<HttpRequest>> pay(String orderId, String tradeNo, long cents) {
        Trade trade = record(orderId, tradeNo, cents, State.PAID);
        boolean drop;
        synchronized (random) {
            drop = random.nextDouble() < dropShare;
        }
        if (drop) {
            dropped.incrementAndGet();
            return Optional.empty();
        }
        return Optional.of(notification(trade));
    }

    /** The order is paid and its notification lost: only a query can find the payment. */
    public void payWithoutNotifying(String orderId, String tradeNo, long cents) {
        record(orderId, tradeNo, cents, State.PAID);
        dropped.incrementAndGet();
    }

    /** A payment started and not finished. */
    public void open(String orderId, long cents) {
        record(orderId, null, cents, State.UNPAID);
    }

    public void close(String orderId, long cents) {
        record(orderId, null, cents, State.CLOSED);
    }

    /** A notification of the order's paid trade, delivered late. */
    public Supplier<HttpRequest> lateNotification(String orderId) {
        return notification(trades.get(orderId));
    }

    /** Answers about {@code orderId} are signed with a key the service does not know, until {@link #unforge}. */
    public void forge(String orderId) {
        forged.add(orderId);
    }

    public void unforge(String orderId) {
        forged.remove(orderId);
    }

    public int queries(String orderId) {
        AtomicInteger count = queries.get(orderId);
        return count == null ? 0 : count.get();
    }

    /** Notifications dropped so far (by {@link #pay} or {@link #payWithoutNotifying}). */
    public int dropped() {
        return dropped.get();
    }

    /** Queries of one order that came while another query of it was being answered. */
    public int overlaps() {
        return overlaps.get();
    }

    /** Requests refused because their signature or merchant did not verify. */
    public int refused() {
        return refused.get();
    }

    /** The day's bill as the gateway makes it: its paid trades, then the lines added for that day. */
    public List<BillLine> billLines(LocalDate date) {
        List<BillLine> lines = new ArrayList<>();
        trades.values().stream()
                .filter(t -> t.state() == State.PAID && LocalDate.ofInstant(t.paidAt(), GATEWAY_TIME).equals(date))
                .sorted(Comparator.comparing(Trade::paidAt))
                .forEach(t -> lines.add(BillLine.payment(t.orderId(), t.tradeNo(),
                        billAmounts.getOrDefault(t.orderId(), t.cents()), t.paidAt())));
        lines.addAll(addedLines.getOrDefault(date, List.of()));
        return lines;
    }

    /** A line added to the day's bill after its trades, e.g. a refund or a payment's line repeated. */
    public void addBillLine(LocalDate date, BillLine line) {
        addedLines.computeIfAbsent(date, d -> new CopyOnWriteArrayList<>()).add(line);
    }

    /** The bill says the order's trade took {@code cents}. */
    public void billAmount(String orderId, long cents) {
        billAmounts.put(orderId, cents);
    }

    /** While on, the bill's answer or file cannot be trusted (each gateway's own way: a hash, a sign). */
    public void tamperBills(boolean on) {
        tampered = on;
    }

    protected boolean tampered() {
        return tampered;
    }

    /** Today, as the gateways date their bills. */
    public static LocalDate today() {
        return LocalDate.now(GATEWAY_TIME);
    }

    /** A file offered for download once, at the token this answers. */
    protected String offer(byte[] file) {
        String token = UUID.randomUUID().toString().replace("-", "");
        downloads.put(token, file);
        return token;
    }

    /** The file offered at {@code token}, taken: null when there is none. */
    protected byte[] take(String token) {
        return token == null ? null : downloads.remove(token);
    }

    /** Serves {@code route} at {@code path}. */
    protected void route(String path, Route route) {
        server.createContext(path, exchange -> {
            try {
                send(exchange, route.answer(exchange, exchange.getRequestBody().readAllBytes()));
            } finally {
                exchange.close();
            }
        });
    }

    /** A request at the query's address that is not a query (Alipay's one gateway address): its answer, or empty. */
    protected Optional<Answer> other(HttpExchange exchange, byte[] body) {
        return Optional.empty();
    }

    private Trade record(String orderId, String tradeNo, long cents, State state) {
        Trade trade = new Trade(orderId, tradeNo, cents, state, state == State.PAID ? Instant.now() : null);
        trades.put(orderId, trade);
        return trade;
    }

    /** The first delivery of {@code trade}'s notification, signed when it is built. */
    protected abstract Supplier<HttpRequest> notification(Trade trade);

    /** The order a request asks about, or empty when it is not signed by the merchant (then {@link #refusal}). */
    protected abstract Optional<Asked> read(HttpExchange exchange, byte[] body);

    protected abstract Answer refusal();

    /** The answer about {@code trade} (null: unknown here), signed with the gateway's key or, when {@code forged}, another. */
    protected abstract Answer answer(String orderId, Trade trade, boolean forged);

    private void handle(HttpExchange exchange) throws IOException {
        try {
            byte[] body = exchange.getRequestBody().readAllBytes();
            Optional<Answer> other = other(exchange, body);
            if (other.isPresent()) {
                send(exchange, other.get());
                return;
            }
            Optional<Asked> asked = read(exchange, body);
            if (asked.isEmpty()) {
                refused.incrementAndGet();
                send(exchange, refusal());
                return;
            }
            String orderId = asked.get().orderId();
            queries.computeIfAbsent(orderId, k -> new AtomicInteger()).incrementAndGet();
            AtomicInteger now = inFlight.computeIfAbsent(orderId, k -> new AtomicInteger());
            if (now.incrementAndGet() > 1) {
                overlaps.incrementAndGet();
            }
            try {
                // a gateway takes a moment to answer: long enough for a second query of the order to overlap
                Thread.sleep(20);
                send(exchange, answer(orderId, trades.get(orderId), forged.contains(orderId)));
            } finally {
                now.decrementAndGet();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            exchange.close();
        }
    }

    protected static void send(HttpExchange exchange, Answer answer) throws IOException {
        answer.headers().forEach(exchange.getResponseHeaders()::set);
        try {
            exchange.sendResponseHeaders(answer.status(), answer.body().length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(answer.body());
            }
        } catch (IOException clientGone) {
            // the caller timed out and left: its answer goes nowhere, like a real one would
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
