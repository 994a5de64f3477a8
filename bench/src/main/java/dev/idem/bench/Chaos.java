package dev.idem.bench;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One run of the fault suite ({@code scripts/chaos.sh}): fresh orders, a storm of signed callbacks
 * ({@code --deliveries} per order, round-robin to {@code --ports}) with {@code --command} injecting
 * the fault once {@code --at} of it is out, each delivery retried until SUCCESS for {@code --give-up}
 * s; then the accounts (API, SQL, dead-letter topics, reconciliation healthy within {@code --settle}
 * s). {@code --pid-files}: a soak, RSS and latency per minute and their slopes, at half the peak
 * measured first with {@code --peak-seconds}. {@code --kafka-during-fault}: deliveries sent during the
 * fault also go to payment-callbacks. {@code --fault-note F}: lines of F shown on the result line.
 * {@code --losses-expected} (asynchronous failover): passes when the reconciliation shows every loss.
 */
final class Chaos {

    private static final int ORDERS_PER_USER = 10;

    private record Delivery(String user, Ops.Order order) {}

    /** An answer that was not SUCCESS, and when it came (ms since the storm began). */
    private record Miss(long atMs, String what) {}

    private final Settings settings;
    private final Args args;
    private final String fault;
    private final String prefix;
    private final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(2)
            .setPreferNativeTransport(false));
    private final List<WebClient> clients = new ArrayList<>();
    private final Ops ops;
    private final long giveUpMs;
    private final KafkaProducer<String, String> kafkaCopies;
    private int roundRobin;

    private Chaos(Settings settings, Args args) {
        this.settings = settings;
        this.args = args;
        this.fault = args.get("fault");
        this.prefix = "chaos-" + args.get("run") + "-" + fault + "-";
        this.ops = new Ops(settings.secret());
        this.giveUpMs = TimeUnit.SECONDS.toMillis((long) args.number("give-up", 180));
        this.kafkaCopies = !Boolean.parseBoolean(args.get("kafka-during-fault", "false")) ? null : new KafkaProducer<>(
                Map.<String, Object>of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.kafka(), ProducerConfig.ACKS_CONFIG, "all",
                        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true"), new StringSerializer(), new StringSerializer());
        for (String port : args.get("ports").split(",")) {
            clients.add(WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
                    .setDefaultPort(Integer.parseInt(port)).setKeepAlive(true)
                    .setMaxPoolSize((int) args.number("concurrency", 32)).setConnectTimeout(2_000)
                    .setIdleTimeout(30).setMaxWaitQueueSize(-1)));
        }
    }

    static void run(Settings settings, Args args) throws Exception {
        Chaos chaos = new Chaos(settings, args);
        try {
            JsonObject result = chaos.runOnce();
            Files.writeString(Path.of(args.get("out")), result.encodePrettily());
            System.out.println(result.getString("line"));
            if (!result.getBoolean("pass")) {
                System.exit(1);
            }
        } finally { // every Kafka copy was acknowledged: the producer has nothing left to send
            chaos.vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private WebClient next() { return clients.get(Math.floorMod(roundRobin++, clients.size())); }

    private JsonObject runOnce() throws Exception {
        int orders = (int) args.number("orders", 2000);
        int perOrder = (int) args.number("deliveries", 6);
        double rate = args.number("rate", 400);
        JsonObject peak = null;
        if (args.number("peak-seconds", 0) > 0) {
            peak = peak((int) args.number("peak-warmup", 20), (int) args.number("peak-seconds", 0),
                    (int) args.number("peak-concurrency", 64));
            rate = peak.getDouble("perSecond") / 2;
            orders = (int) Math.ceil(rate * args.number("minutes", 30) * 60 / perOrder);
            peak.put("soakRatePerSecond", round(rate, 0));
        }
        long deadLettersBefore = deadLetters();
        Progress.say(fault + ": creating " + orders + " orders");
        Map<String, List<Ops.Order>> byUser = createOrders(prefix, orders);
        List<Delivery> deliveries = storm(byUser, perOrder);
        // the storm lasts deliveries ÷ rate: wait that long and ten minutes more
        Storm storm = await(new Storm(deliveries, rate).start(), (long) (deliveries.size() / rate / 60) + 10);
        Progress.done(String.format("%s: storm over in %.1f s, %d answers not SUCCESS, %d lost", fault,
                storm.elapsedMs / 1000.0, storm.misses.size(), storm.n("lost")));
        JsonObject accounts = new JsonObject();
        long settleStart = System.nanoTime();
        try (Connection db = Db.connect(settings)) {
            long deadline = settleStart + TimeUnit.SECONDS.toNanos((long) args.number("settle", 60));
            while (System.nanoTime() < deadline && count(db, prefix, "SELECT count(*) FROM coupons WHERE user_id LIKE ?") < orders) {
                Thread.sleep(500);
            }
            accounts.put("couponsSettledSeconds", round((System.nanoTime() - settleStart) / 1e9, 1));
            sql(db, accounts);
        }
        api(byUser, accounts);
        accounts.put("deadLettered", deadLetters() - deadLettersBefore);
        return verdict(orders, perOrder, storm, accounts, reconciliation(args.number("settle", 60), settleStart), peak);
    }

    /**
     * The first-delivery peak: fresh orders, one callback each, {@code concurrency} in flight, for
     * {@code warmup} then {@code seconds} s, the second part counted; its coupons awaited after.
     */
    private JsonObject peak(int warmup, int seconds, int concurrency) throws Exception {
        String peakPrefix = "chaos-" + args.get("run") + "-peak-";
        Progress.say(fault + ": creating orders for the first-delivery peak");
        List<Delivery> firsts = storm(createOrders(peakPrefix, (int) args.number("peak-orders", 100_000)), 1);
        Promise<Void> measured = Promise.promise();
        long from = System.currentTimeMillis() + warmup * 1_000L;
        long to = from + seconds * 1_000L;
        long[] m = new long[4]; // answered SUCCESS in the window, in flight, not SUCCESS in the window, sent
        vertx.runOnContext(x -> new Runnable() {
            public void run() {
                while (m[1] < concurrency && m[3] < firsts.size() && System.currentTimeMillis() < to) {
                    Delivery d = firsts.get((int) m[3]++);
                    m[1]++;
                    ops.callback(next(), d.user(), d.order()).onComplete(answer -> {
                        long now = System.currentTimeMillis();
                        m[1]--;
                        m[answer.succeeded() && answer.result().statusCode() == 200 ? 0 : 2] += now >= from && now <= to ? 1 : 0;
                        if (m[1] > 0 || (m[3] < firsts.size() && now < to)) {
                            run();
                        } else {
                            measured.tryComplete();
                        }
                    });
                }
            }
        }.run());
        await(measured.future(), 10);
        double perSecond = m[0] / (double) seconds;
        Progress.done(String.format("%s: first-delivery peak %.0f/s (%d answers, %d not SUCCESS, %d orders used)",
                fault, perSecond, m[0], m[2], m[3]));
        try (Connection db = Db.connect(settings)) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
            while (System.nanoTime() < deadline && count(db, peakPrefix, "SELECT count(*) FROM coupons WHERE user_id LIKE ?") < m[3]) {
                Thread.sleep(1000);
            }
        }
        return new JsonObject().put("perSecond", round(perSecond, 0)).put("warmupSeconds", warmup).put("seconds", seconds)
                .put("concurrency", concurrency).put("answered", m[0]).put("notSuccess", m[2])
                .put("exhaustedOrders", m[3] == firsts.size());
    }

    private Map<String, List<Ops.Order>> createOrders(String prefix, int orders) {
        Map<String, List<Ops.Order>> byUser = new LinkedHashMap<>();
        List<Future<?>> pending = new ArrayList<>();
        for (int i = 0; i < orders; i++) {
            String user = prefix + "u" + (i / ORDERS_PER_USER);
            int key = i % ORDERS_PER_USER;
            List<Ops.Order> list = byUser.computeIfAbsent(user, u -> new ArrayList<>());
            pending.add(retry(() -> Ops.submit(next(), user, key), r -> r.statusCode() == 201).onSuccess(
                    r -> list.add(new Ops.Order(key, r.bodyAsJsonObject().getString("orderId"), Ops.amountOf(key)))));
            if (pending.size() == 64 || i == orders - 1) {
                await(Future.all(pending), 10);
                pending.clear();
            }
        }
        return byUser;
    }

    /** Each order's deliveries land close together (a retry storm), in a shuffled mix of orders. */
    private static List<Delivery> storm(Map<String, List<Ops.Order>> byUser, int perOrder) {
        List<Delivery> all = new ArrayList<>();
        byUser.forEach((user, list) -> list.forEach(order -> {
            for (int i = 0; i < perOrder; i++) {
                all.add(new Delivery(user, order));
            }
        }));
        Random random = new Random(42);
        for (int from = 0; from < all.size(); from += 20 * perOrder) {
            Collections.shuffle(all.subList(from, Math.min(all.size(), from + 20 * perOrder)), random);
        }
        return all;
    }

    /** Sends until {@code ok} holds, with backoff; fails after {@code --give-up}. */
    private Future<HttpResponse<Buffer>> retry(Supplier<Future<HttpResponse<Buffer>>> send, Predicate<HttpResponse<Buffer>> ok) {
        Promise<HttpResponse<Buffer>> promise = Promise.promise();
        long start = System.currentTimeMillis();
        vertx.runOnContext(x -> attempt(send, ok, promise, start, 0));
        return promise.future();
    }

    private void attempt(Supplier<Future<HttpResponse<Buffer>>> send, Predicate<HttpResponse<Buffer>> ok,
                         Promise<HttpResponse<Buffer>> promise, long start, int n) {
        send.get().onComplete(answer -> {
            if (answer.succeeded() && ok.test(answer.result())) {
                promise.complete(answer.result());
            } else if (System.currentTimeMillis() - start > giveUpMs) {
                promise.fail("gave up: " + (answer.failed() ? answer.cause() : answer.result().statusCode()));
            } else {
                vertx.setTimer(backoff(n), t -> attempt(send, ok, promise, start, n + 1));
            }
        });
    }

    private static long backoff(int attempt) { return Math.min(2_000, 100L << Math.min(attempt, 5)); }

    /** The storm: at most {@code --concurrency} deliveries in flight, started at {@code rate}/s. */
    private final class Storm {
        final List<Delivery> deliveries;
        final List<Miss> misses = new ArrayList<>();
        final int concurrency = (int) args.number("concurrency", 32);
        final double rate;
        final int faultAt;
        final long start = System.currentTimeMillis();
        final Promise<Storm> done = Promise.promise();
        int started, finished, inFlight;
        /** first, duplicate, anomaly answers; lost and retried deliveries; Kafka copies; the slowest answer */
        final Map<String, Long> n = new LinkedHashMap<>();
        /** Per minute of the storm: latencies (ms, first send to SUCCESS) and the instances' RSS (MB). */
        final Map<Integer, List<Long>> latencies = new LinkedHashMap<>();
        final Map<Integer, List<Long>> rss = new LinkedHashMap<>();
        long faultFromMs = -1, faultToMs = -1, elapsedMs;
        int faultExit = -1;
        boolean faultDone;

        Storm(List<Delivery> deliveries, double rate) {
            this.deliveries = deliveries;
            this.rate = rate;
            this.faultAt = (int) (deliveries.size() * Double.parseDouble(args.get("at", "0.3")));
        }

        Future<Storm> start() {
            vertx.runOnContext(x -> {
                vertx.setPeriodic(10, this::tick);
                if (!args.get("pid-files", "").isEmpty()) {
                    sampleRss();
                    vertx.setPeriodic(60_000, id -> sampleRss());
                }
                vertx.setPeriodic(1000, id -> {
                    if (finished == deliveries.size()) {
                        vertx.cancelTimer(id);
                    }
                    Progress.line(String.format("%s: %d/%d delivered, %d in flight, %d not SUCCESS%s", fault,
                            finished, deliveries.size(), inFlight, misses.size(),
                            faultFromMs < 0 ? "" : faultToMs < 0 ? ", fault on" : ", fault over"));
                });
            });
            return done.future();
        }

        private void tick(long timer) {
            long allowed = Math.min(deliveries.size(), (long) ((System.currentTimeMillis() - start) * rate / 1000.0) + 1);
            while (started < allowed && inFlight < concurrency) {
                if (started == faultAt) {
                    injectFault();
                }
                inFlight++;
                deliver(deliveries.get(started++), System.currentTimeMillis(), 0);
            }
            if (started == deliveries.size() && faultAt >= deliveries.size() && faultFromMs < 0) {
                injectFault();
            }
            if (finished == deliveries.size() && faultDone && n("kafkaAcked") + n("kafkaFailed") == n("kafkaCopies")) {
                vertx.cancelTimer(timer);
                elapsedMs = System.currentTimeMillis() - start;
                done.complete(this);
            }
        }

        private void deliver(Delivery delivery, long firstSentAt, int attempt) {
            if (attempt == 0 && kafkaCopies != null && faultFromMs >= 0 && faultToMs < 0) {
                // the same payment on the Kafka channel, as payment-callbacks carries it (unsigned, trusted)
                add("kafkaCopies", 1);
                kafkaCopies.send(new ProducerRecord<>("payment-callbacks", Ops.tradeNo(delivery.user(), delivery.order()),
                        ops.callbackBody(delivery.user(), delivery.order())), (metadata, failure) -> vertx.runOnContext(
                                x -> add(failure == null ? "kafkaAcked" : "kafkaFailed", 1)));
            }
            long sentAt = System.currentTimeMillis();
            ops.callback(next(), delivery.user(), delivery.order()).onComplete(answer -> {
                long now = System.currentTimeMillis();
                n.merge("slowestAnswerMs", now - sentAt, Math::max);
                String body = answer.succeeded() && answer.result().statusCode() == 200 ? answer.result().bodyAsString() : null;
                if (body != null && body.contains("\"SUCCESS\"")) {
                    latencies.computeIfAbsent((int) ((now - start) / 60_000), k -> new ArrayList<>()).add(now - firstSentAt);
                    add(body.contains("\"anomaly\"") ? "anomaly" : body.contains("\"duplicate\":true") ? "duplicate" : "first", 1);
                } else {
                    misses.add(new Miss(now - start, answer.failed() ? answer.cause().getClass().getSimpleName()
                            : answer.result().statusCode() + " " + Ops.code(answer.result())));
                    add("retried", attempt == 0 ? 1 : 0);
                    if (now - firstSentAt <= giveUpMs) {
                        vertx.setTimer(backoff(attempt), t -> deliver(delivery, firstSentAt, attempt + 1));
                        return;
                    }
                    add("lost", 1);
                }
                inFlight--;
                finished++;
            });
        }

        void add(String key, long value) { n.merge(key, value, Long::sum); }

        long n(String key) { return n.getOrDefault(key, 0L); }

        /** Each instance's resident memory now, in MB, under the storm's current minute. */
        private void sampleRss() {
            int minute = (int) ((System.currentTimeMillis() - start) / 60_000);
            for (String file : args.get("pid-files").split(",")) {
                try {
                    String pid = Files.readString(Path.of(file)).trim();
                    Files.readAllLines(Path.of("/proc", pid, "status")).stream().filter(l -> l.startsWith("VmRSS:"))
                            .forEach(l -> rss.computeIfAbsent(minute, k -> new ArrayList<>())
                                    .add(Long.parseLong(l.replaceAll("[^0-9]", "")) / 1024));
                } catch (Exception gone) {
                    // an instance restarting: no sample this minute
                }
            }
        }

        /** Runs the fault's command off the event loop; the storm goes on meanwhile. */
        private void injectFault() {
            faultFromMs = System.currentTimeMillis() - start;
            String command = args.get("command", "");
            Progress.say(fault + ": injecting at " + started + " deliveries" + (command.isEmpty() ? " (no fault)" : ""));
            CompletableFuture.supplyAsync(() -> {
                try {
                    return command.isEmpty() ? 0 : new ProcessBuilder("bash", "-c", command).inheritIO().start().waitFor();
                } catch (Exception e) {
                    return 255;
                }
            }).thenAccept(code -> vertx.runOnContext(x -> {
                faultExit = code;
                faultToMs = System.currentTimeMillis() - start;
                faultDone = true;
            }));
        }
    }

    private void sql(Connection db, JsonObject accounts) throws SQLException {
        // the archive counts too (the soak archives as it goes): one DONE record per order, in one of the two tables
        String done = "SELECT key FROM %s WHERE scope = 'payment-callback' AND key LIKE ? AND status = 'DONE'";
        done = done.formatted("dedup_record") + " UNION ALL " + done.formatted("dedup_record_archive");
        String[] queries = {
            "ordersPaid", "SELECT count(*) FROM orders WHERE user_id LIKE ? AND status = 'PAID'",
            "ordersNotPaid", "SELECT count(*) FROM orders WHERE user_id LIKE ? AND status <> 'PAID'",
            "paidWithoutExactlyOneCoupon", "SELECT count(*) FROM orders o WHERE o.user_id LIKE ? AND o.status = 'PAID'"
                    + " AND (SELECT count(*) FROM coupons c WHERE c.source_key = 'paid:' || o.id) <> 1",
            "couponsWithoutPaidOrder", "SELECT count(*) FROM coupons c WHERE c.user_id LIKE ? AND NOT EXISTS"
                    + " (SELECT 1 FROM orders o WHERE c.source_key = 'paid:' || o.id AND o.status = 'PAID')",
            "coupons", "SELECT count(*) FROM coupons WHERE user_id LIKE ?",
            "callbackRecordsDone", "SELECT count(*) FROM (" + done + ") r",
            "callbackKeysDone", "SELECT count(DISTINCT key) FROM (" + done + ") r",
            "callbackRecordsArchived", "SELECT count(*) FROM dedup_record_archive WHERE scope = 'payment-callback' AND key LIKE ?",
            "callbackRecordsNotDone", "SELECT count(*) FROM dedup_record WHERE scope = 'payment-callback' AND key LIKE ? AND status <> 'DONE'",
            "anomaliesStored", "SELECT count(*) FROM payment_anomaly WHERE trade_no LIKE ?",
            "outboxUnpublished", "SELECT count(*) FROM outbox_event e WHERE e.published_at IS NULL AND e.event_key IN"
                    + " (SELECT 'paid:' || o.id FROM orders o WHERE o.user_id LIKE ?)"};
        for (int i = 0; i < queries.length; i += 2) {
            accounts.put(queries[i], count(db, prefix, queries[i + 1]));
        }
    }

    private static long count(Connection db, String prefix, String sql) throws SQLException {
        try (PreparedStatement q = db.prepareStatement(sql)) {
            for (int i = 1; i <= q.getParameterMetaData().getParameterCount(); i++) {
                q.setString(i, prefix + "%");
            }
            try (ResultSet rs = q.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** What a user sees: each order through GET /api/orders/{id}, each user's coupons. */
    private void api(Map<String, List<Ops.Order>> byUser, JsonObject accounts) {
        int[] paidCouponsMiscounted = new int[3];
        List<Future<?>> pending = new ArrayList<>();
        byUser.forEach((user, list) -> {
            for (Ops.Order order : list) {
                pending.add(get(user, "/api/orders/" + order.id()).onSuccess(r -> paidCouponsMiscounted[0] +=
                        "PAID".equals(r.bodyAsJsonObject().getString("status")) ? 1 : 0));
            }
            pending.add(get(user, "/api/users/" + user + "/coupons").onSuccess(r -> {
                int n = r.bodyAsJsonArray().size();
                paidCouponsMiscounted[1] += n;
                paidCouponsMiscounted[2] += n == list.size() ? 0 : 1;
            }));
        });
        await(Future.all(pending), 10);
        accounts.put("apiOrdersPaid", paidCouponsMiscounted[0]).put("apiCoupons", paidCouponsMiscounted[1])
                .put("apiUsersWithWrongCouponCount", paidCouponsMiscounted[2]);
    }

    private Future<HttpResponse<Buffer>> get(String user, String path) {
        return retry(() -> next().get(path).putHeader("X-User-Id", user).send(), r -> r.statusCode() == 200);
    }

    private long deadLetters() throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, settings.kafka()))) {
            Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
            admin.describeTopics(List.of("coupon-grants-dlq", "payment-callbacks-dlq")).allTopicNames()
                    .get(30, TimeUnit.SECONDS).forEach((topic, description) -> description.partitions().forEach(
                            p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest())));
            return admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).values().stream()
                    .mapToLong(info -> info.offset()).sum();
        }
    }

    /** Polls GET /admin/reconciliation until healthy, at most {@code seconds} after {@code since}. */
    private JsonObject reconciliation(long seconds, long since) throws InterruptedException {
        JsonObject report = new JsonObject().put("checks", new JsonObject());
        do { // at least once, however late
            Thread.sleep(report.containsKey("healthy") ? 1000 : 0);
            HttpResponse<Buffer> r = await(next().get("/admin/reconciliation").putHeader("X-Admin-Token",
                    System.getenv().getOrDefault("CHAOS_ADMIN_TOKEN", "")).send().recover(e -> Future.succeededFuture(null)), 10);
            report = r != null && r.statusCode() == 200 ? r.bodyAsJsonObject() : report.put("healthy", false);
        } while (!report.getBoolean("healthy", false) && System.nanoTime() < since + TimeUnit.SECONDS.toNanos(seconds));
        JsonObject counts = new JsonObject();
        report.getJsonObject("checks").forEach(e -> counts.put(e.getKey(), ((JsonObject) e.getValue()).getLong("count")));
        return new JsonObject().put("healthy", report.getBoolean("healthy", false))
                .put("afterSeconds", round((System.nanoTime() - since) / 1e9, 1)).put("checks", counts);
    }

    private JsonObject verdict(int orders, int perOrder, Storm storm, JsonObject a, JsonObject rec, JsonObject peak) {
        long grace = (long) args.number("grace", 10) * 1000;
        long faultTo = storm.faultToMs < 0 ? storm.faultFromMs : storm.faultToMs;
        long outside = storm.misses.stream().filter(m -> m.atMs() < storm.faultFromMs || m.atMs() > faultTo + grace).count();
        Map<String, Integer> kinds = new LinkedHashMap<>();
        storm.misses.forEach(m -> kinds.merge(m.what(), 1, Integer::sum));
        List<String> wrong = new ArrayList<>();
        check(wrong, storm.faultExit == 0, "fault command exited " + storm.faultExit);
        check(wrong, storm.n("lost") == 0, storm.n("lost") + " deliveries never answered SUCCESS");
        check(wrong, storm.n("kafkaFailed") == 0, storm.n("kafkaFailed") + " Kafka copies not acknowledged by the broker");
        check(wrong, outside == 0, outside + " answers not SUCCESS outside the fault");
        check(wrong, storm.n("anomaly") == 0 && a.getLong("anomaliesStored") == 0, "anomalies reported");
        String lost = "";
        if (Boolean.parseBoolean(args.get("losses-expected", "false"))) {
            // what a failover without a synchronous standby took back of what had been acknowledged,
            // and whether the reconciliation report shows all of it
            long notPaid = orders - a.getLong("ordersPaid");
            long recordsGone = orders - a.getLong("callbackKeysDone");
            long orphans = a.getLong("couponsWithoutPaidOrder");
            long marksShown = rec.getJsonObject("checks").getLong("doneMarksWithoutRecord", 0L);
            long orphansShown = rec.getJsonObject("checks").getLong("couponsWithoutPaidOrder", 0L);
            check(wrong, marksShown >= recordsGone, recordsGone + " callback records lost, the report shows " + marksShown);
            check(wrong, orphansShown == orphans, orphans + " coupons without a paid order, the report shows " + orphansShown);
            lost = String.format(" | acknowledged then lost: %d payments (orders back to WAIT_PAY %d, callback records "
                    + "gone %d, coupons without a paid order %d); reconciliation shows DONE marks without a record %d, "
                    + "coupons without a paid order %d", Math.max(notPaid, recordsGone), notPaid, recordsGone, orphans,
                    marksShown, orphansShown);
        } else {
            check(wrong, a.getLong("ordersPaid") == orders && a.getLong("apiOrdersPaid") == orders, "orders not all PAID");
            check(wrong, a.getLong("paidWithoutExactlyOneCoupon") == 0, "paid orders without exactly one coupon");
            check(wrong, a.getLong("couponsWithoutPaidOrder") == 0, "coupons without a paid order");
            check(wrong, a.getLong("coupons") == orders && a.getLong("apiCoupons") == orders
                    && a.getLong("apiUsersWithWrongCouponCount") == 0, "coupon count is not one per order");
            check(wrong, a.getLong("callbackRecordsDone") == orders && a.getLong("callbackKeysDone") == orders
                    && a.getLong("callbackRecordsNotDone") == 0, "dedup records are not one DONE per order");
            check(wrong, rec.getBoolean("healthy"), "reconciliation not healthy: " + rec.getJsonObject("checks").encode());
        }
        check(wrong, a.getLong("outboxUnpublished") == 0, "outbox events left unpublished");
        check(wrong, a.getLong("deadLettered") == 0, "records dead-lettered");
        JsonObject note = faultNote();
        String line = String.format("%-17s %5d orders × %d = %5d deliveries | not SUCCESS %4d (outside fault %d), %d "
                        + "retried, lost %d, slowest answer %.1f s | first %d, dup %d | PAID %d, coupons %d, orphans %d, "
                        + "DLQ %d | reconciled in %.0f s | %s", fault, orders, perOrder, storm.deliveries.size(),
                storm.misses.size(), outside, storm.n("retried"), storm.n("lost"), storm.n("slowestAnswerMs") / 1000.0,
                storm.n("first"), storm.n("duplicate"), a.getLong("ordersPaid"), a.getLong("coupons"),
                a.getLong("couponsWithoutPaidOrder"), a.getLong("deadLettered"), rec.getDouble("afterSeconds"),
                wrong.isEmpty() ? "PASS" : "FAIL: " + String.join("; ", wrong))
                + note.stream().map(e -> " " + e.getKey() + " " + e.getValue()).reduce(note.isEmpty() ? "" : " |", String::concat)
                + lost;
        JsonObject soak = soak(storm);
        if (soak != null) {
            double achieved = storm.deliveries.size() * 1000.0 / Math.max(1, storm.elapsedMs);
            soak.put("ratePerSecond", round(storm.rate, 0)).put("achievedPerSecond", round(achieved, 0)).put("peak", peak);
            line += String.format(" | soak %d min at %.0f deliveries/s (asked %.0f%s): p99 %s ms, slope %+.2f ms/min; "
                            + "RSS %s MB, slope %+.2f MB/min", soak.getJsonArray("minutes").size(), achieved, storm.rate,
                    peak == null ? "" : String.format(", half the first-delivery peak %.0f/s", peak.getDouble("perSecond")),
                    soak.getString("p99Range"), soak.getDouble("p99SlopeMsPerMin"), soak.getString("rssRange"),
                    soak.getDouble("rssSlopeMbPerMin"));
        }
        return new JsonObject().put("fault", fault).put("orders", orders).put("deliveriesPerOrder", perOrder)
                .put("deliveries", storm.deliveries.size()).put("stormSeconds", round(storm.elapsedMs / 1000.0, 1))
                .put("faultFromSeconds", round(storm.faultFromMs / 1000.0, 1)).put("faultToSeconds", round(faultTo / 1000.0, 1))
                .put("answers", new JsonObject(new LinkedHashMap<String, Object>(storm.n)).put("notSuccess", storm.misses.size())
                        .put("notSuccessOutsideFault", outside).put("notSuccessKinds", new JsonObject(new LinkedHashMap<>(kinds))))
                .put("accounts", a).put("faultNote", note).put("reconciliation", rec).put("soak", soak)
                .put("problems", new JsonArray(wrong)).put("pass", wrong.isEmpty()).put("line", line);
    }

    /** The {@code name value} lines the fault's command wrote, in order; empty without any. */
    private JsonObject faultNote() {
        JsonObject note = new JsonObject(new LinkedHashMap<>());
        Path file = Path.of(args.get("fault-note", "/nonexistent"));
        try (var lines = Files.exists(file) ? Files.lines(file) : java.util.stream.Stream.<String>empty()) {
            lines.map(line -> line.trim().split("\\s+", 2)).filter(pair -> pair.length == 2).forEach(pair -> note.put(pair[0], pair[1]));
        } catch (java.io.IOException unreadable) {
            note.put("faultNote", "unreadable: " + unreadable.getMessage());
        }
        return note;
    }

    /** Per-minute p50, p99 and RSS, and their least-squares slopes; null when the storm was no soak. */
    private static JsonObject soak(Storm storm) {
        if (storm.rss.isEmpty()) {
            return null;
        }
        JsonArray minutes = new JsonArray();
        List<double[]> p99 = new ArrayList<>();
        List<double[]> rss = new ArrayList<>();
        storm.latencies.forEach((minute, values) -> {
            List<Long> sorted = new ArrayList<>(values);
            Collections.sort(sorted);
            long p99th = sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(sorted.size() * 0.99) - 1));
            List<Long> memory = storm.rss.getOrDefault(minute, List.of());
            minutes.add(new JsonObject().put("minute", minute).put("answered", sorted.size())
                    .put("p50Ms", sorted.get(sorted.size() / 2)).put("p99Ms", p99th)
                    .put("rssMb", new JsonArray(new ArrayList<>(memory))));
            p99.add(new double[] {minute, p99th});
            memory.forEach(mb -> rss.add(new double[] {minute, mb}));
        });
        return new JsonObject().put("minutes", minutes).put("p99Range", range(p99))
                .put("p99SlopeMsPerMin", round(slope(p99), 2)).put("rssRange", range(rss))
                .put("rssSlopeMbPerMin", round(slope(rss), 2));
    }

    private static String range(List<double[]> points) {
        return String.format("%.0f–%.0f", points.stream().mapToDouble(p -> p[1]).min().orElse(0),
                points.stream().mapToDouble(p -> p[1]).max().orElse(0));
    }

    private static double slope(List<double[]> points) {
        double mx = points.stream().mapToDouble(p -> p[0]).average().orElse(0);
        double my = points.stream().mapToDouble(p -> p[1]).average().orElse(0);
        double num = 0;
        double den = 0;
        for (double[] p : points) {
            num += (p[0] - mx) * (p[1] - my);
            den += (p[0] - mx) * (p[0] - mx);
        }
        return den == 0 ? 0 : num / den;
    }

    private static double round(double value, int digits) { return Math.round(value * Math.pow(10, digits)) / Math.pow(10, digits); }

    private static void check(List<String> wrong, boolean ok, String problem) { if (!ok) { wrong.add(problem); } }

    private static <T> T await(Future<T> future, long minutes) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(minutes, TimeUnit.MINUTES);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
