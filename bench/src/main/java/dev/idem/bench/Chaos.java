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
import java.util.Properties;
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
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.TopicPartition;

/**
 * One run of the fault suite ({@code scripts/chaos.sh}): fresh orders, then a storm of signed
 * callbacks, {@code deliveries} per order, sent round-robin to every instance, while one fault is
 * injected by a command once a share of the storm has gone out. A delivery not answered SUCCESS is
 * retried, as a gateway does, until it is. Then the accounts: through the public API, through SQL,
 * the dead-letter topics and the reconciliation report, which must be healthy within a minute.
 *
 * <pre>
 *   chaos --fault NAME --ports P1,P2 --run RUN [--command CMD] [--orders 2000] [--deliveries 6]
 *         [--rate 400] [--concurrency 32] [--at 0.3] [--grace 10] [--settle 60] [--give-up 180]
 *         [--kafka-during-fault false] [--peak-seconds 0 --minutes 30] --out F
 * </pre>
 * With {@code --pid-files F1,F2} (the instances' pid files) the storm is also a soak: every
 * minute the instances' RSS and the latency percentiles of the deliveries answered in it are kept,
 * and their slopes over the run reported. With {@code --peak-seconds N} the soak's pace is half the
 * first-delivery peak of these instances, measured first for N seconds after {@code --peak-warmup}
 * (20) seconds of the same load (fresh orders, one delivery each, {@code --peak-concurrency} in
 * flight, no pause between them); the soak then lasts
 * {@code --minutes} at that pace, {@code --orders} and {@code --rate} set by it.
 * With {@code --kafka-during-fault true}, every delivery sent over HTTP while the fault is on is
 * also produced to {@code payment-callbacks}, as a second channel that keeps bringing the same
 * payments while the service cannot apply them.
 * With {@code --fault-note F} the fault's command may write {@code name value} lines to F (the
 * seconds without a Postgres primary, say): they are kept with the run and shown on its line.
 * With {@code --losses-expected true} (a failover with asynchronous replication) acknowledged
 * payments may be lost: the run then counts them and passes when the reconciliation report shows
 * every one of them (the lost callback records as DONE marks without a record, the coupons granted
 * for orders no longer paid).
 * The admin token comes from CHAOS_ADMIN_TOKEN; database, Kafka and secret as for the benchmark.
 */
final class Chaos {

    private static final int ORDERS_PER_USER = 10;
    /** The reconciliation check of DONE marks in Redis whose record Postgres no longer has. */
    private static final String MARKS_WITHOUT_RECORD = "doneMarksWithoutRecord";
    private static final List<String> DEAD_LETTER_TOPICS = List.of("coupon-grants-dlq", "payment-callbacks-dlq");

    /** One callback to deliver until it is answered SUCCESS. */
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
    private final String adminToken = System.getenv().getOrDefault("CHAOS_ADMIN_TOKEN", "");
    /** How long a delivery is retried before it counts as lost: longer than the longest outage. */
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
        this.kafkaCopies = Boolean.parseBoolean(args.get("kafka-during-fault", "false")) ? producer(settings) : null;
        int concurrency = (int) args.number("concurrency", 32);
        for (String port : args.get("ports").split(",")) {
            clients.add(WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
                    .setDefaultPort(Integer.parseInt(port)).setKeepAlive(true).setMaxPoolSize(concurrency)
                    .setConnectTimeout(2_000).setIdleTimeout(30).setMaxWaitQueueSize(-1)));
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
        } finally {
            if (chaos.kafkaCopies != null) {
                chaos.kafkaCopies.close();
            }
            chaos.vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private static KafkaProducer<String, String> producer(Settings settings) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.kafka());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private WebClient next() {
        return clients.get(Math.floorMod(roundRobin++, clients.size()));
    }

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
            peak.put("soakRatePerSecond", Load.round(rate, 0));
        }
        long deadLettersBefore = deadLetters();
        Progress.say(fault + ": creating " + orders + " orders");
        Map<String, List<Ops.Order>> byUser = createOrders(prefix, orders);

        List<Delivery> deliveries = storm(byUser, perOrder);
        // the storm lasts deliveries ÷ rate, a soak half an hour: wait that long and ten minutes more
        long stormMinutes = (long) (deliveries.size() / rate / 60) + 10;
        Storm storm = await(new Storm(deliveries, rate).start(), stormMinutes);
        Progress.done(String.format("%s: storm over in %.1f s, %d answers not SUCCESS, %d lost", fault,
                storm.elapsedMs / 1000.0, storm.misses.size(), storm.lost));

        JsonObject accounts = new JsonObject();
        long settleStart = System.nanoTime();
        try (Connection db = Db.connect(settings)) {
            awaitCoupons(db, orders, args.number("settle", 60));
            accounts.put("couponsSettledSeconds", Load.round((System.nanoTime() - settleStart) / 1e9, 1));
            sql(db, accounts);
        }
        api(byUser, accounts);
        accounts.put("deadLettered", deadLetters() - deadLettersBefore);
        JsonObject reconciliation = reconciliation(args.number("settle", 60), settleStart);
        return verdict(orders, perOrder, storm, accounts, reconciliation, peak);
    }

    /**
     * The first-delivery peak of the instances as they stand: fresh orders of their own users,
     * one signed callback each, {@code concurrency} in flight and the next sent as one is answered,
     * for {@code warmup} and then {@code seconds} seconds; the rate counts the answers of the
     * second part. Their coupons are awaited before the soak begins, so that it does not start on
     * the peak's backlog.
     */
    private JsonObject peak(int warmup, int seconds, int concurrency) throws Exception {
        String peakPrefix = "chaos-" + args.get("run") + "-peak-";
        int orders = (int) args.number("peak-orders", 100_000);
        Progress.say(fault + ": creating " + orders + " orders for the first-delivery peak");
        List<Delivery> firsts = storm(createOrders(peakPrefix, orders), 1);
        Promise<long[]> measured = Promise.promise();
        vertx.runOnContext(x -> new Object() {
            final long start = System.currentTimeMillis();
            final long from = start + warmup * 1_000L;
            final long to = from + seconds * 1_000L;
            int sent;
            int inFlight;
            long counted;
            long notSuccess;

            void fill() {
                while (inFlight < concurrency && sent < firsts.size() && System.currentTimeMillis() < to) {
                    Delivery delivery = firsts.get(sent++);
                    inFlight++;
                    ops.callback(next(), delivery.user(), delivery.order()).onComplete(answer -> {
                        inFlight--;
                        long now = System.currentTimeMillis();
                        boolean ok = answer.succeeded() && answer.result().statusCode() == 200;
                        if (now >= from && now <= to) {
                            if (ok) {
                                counted++;
                            } else {
                                notSuccess++;
                            }
                        }
                        if (inFlight == 0 && (sent == firsts.size() || now >= to)) {
                            measured.complete(new long[] {counted, Math.min(now, to) - from, notSuccess, sent});
                        } else {
                            fill();
                        }
                    });
                }
            }
        }.fill());
        long[] m = await(measured.future());
        double perSecond = m[0] * 1000.0 / Math.max(1, m[1]);
        Progress.done(String.format("%s: first-delivery peak %.0f/s (%d answers in %.1f s, %d not SUCCESS, %d orders used)",
                fault, perSecond, m[0], m[1] / 1000.0, m[2], m[3]));
        try (Connection db = Db.connect(settings)) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
            while (System.nanoTime() < deadline && count(db, peakPrefix,
                    "SELECT count(*) FROM coupons WHERE user_id LIKE ?") < m[3]) {
                Thread.sleep(1000);
            }
        }
        return new JsonObject().put("perSecond", Load.round(perSecond, 0)).put("warmupSeconds", warmup)
                .put("seconds", seconds)
                .put("concurrency", concurrency).put("answered", m[0]).put("notSuccess", m[2])
                .put("exhaustedOrders", m[3] == firsts.size());
    }

    // ------------------------------------------------------------------------------------ orders

    private Map<String, List<Ops.Order>> createOrders(String prefix, int orders) {
        Map<String, List<Ops.Order>> byUser = new LinkedHashMap<>();
        List<Future<?>> pending = new ArrayList<>();
        for (int i = 0; i < orders; i++) {
            String user = prefix + "u" + (i / ORDERS_PER_USER);
            int key = i % ORDERS_PER_USER;
            List<Ops.Order> list = byUser.computeIfAbsent(user, u -> new ArrayList<>());
            pending.add(retry(() -> Ops.submit(next(), user, key), r -> r.statusCode() == 201)
                    .onSuccess(r -> list.add(new Ops.Order(key, r.bodyAsJsonObject().getString("orderId"),
                            Ops.amountOf(key)))));
            if (pending.size() == 64) {
                await(Future.all(pending));
                pending.clear();
            }
        }
        await(Future.all(pending));
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
        int block = 20 * perOrder;
        for (int from = 0; from < all.size(); from += block) {
            Collections.shuffle(all.subList(from, Math.min(all.size(), from + block)), random);
        }
        return all;
    }

    /** Sends until {@code ok} holds, with backoff; fails after {@link #GIVE_UP_MS}. */
    private Future<HttpResponse<Buffer>> retry(Supplier<Future<HttpResponse<Buffer>>> send,
                                               Predicate<HttpResponse<Buffer>> ok) {
        Promise<HttpResponse<Buffer>> promise = Promise.promise();
        long start = System.currentTimeMillis();
        vertx.runOnContext(x -> attempt(send, ok, promise, start, 0));
        return promise.future();
    }

    private void attempt(Supplier<Future<HttpResponse<Buffer>>> send,
                         Predicate<HttpResponse<Buffer>> ok,
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

    private static long backoff(int attempt) {
        return Math.min(2_000, 100L << Math.min(attempt, 5));
    }

    // ------------------------------------------------------------------------------------- storm

    /** The storm: at most {@code concurrency} deliveries in flight, started at {@code rate}/s. */
    private final class Storm {
        final List<Delivery> deliveries;
        final List<Miss> misses = new ArrayList<>();
        final int concurrency = (int) args.number("concurrency", 32);
        final double rate;
        final int faultAt;
        final long start = System.currentTimeMillis();
        final Promise<Storm> done = Promise.promise();
        int started;
        int finished;
        int inFlight;
        int firsts;
        int duplicates;
        int anomalies;
        int lost;
        int retried;
        int kafkaSent;
        int kafkaAcked;
        int kafkaFailed;
        /** The longest wait for one answer, whatever it said: a request the service let hang shows here. */
        long slowestAnswerMs;
        /** Per minute of the storm: latencies (ms, first send to SUCCESS) and the instances' RSS (MB). */
        final Map<Integer, List<Long>> latencies = new LinkedHashMap<>();
        final Map<Integer, List<Long>> rss = new LinkedHashMap<>();
        long faultFromMs = -1;
        long faultToMs = -1;
        int faultExit = -1;
        long elapsedMs;
        final CompletableFuture<Void> faultDone = new CompletableFuture<>();

        Storm(List<Delivery> deliveries, double rate) {
            this.deliveries = deliveries;
            this.rate = rate;
            this.faultAt = (int) (deliveries.size() * Double.parseDouble(args.get("at", "0.3")));
        }

        Future<Storm> start() {
            vertx.runOnContext(x -> {
                vertx.setPeriodic(10, id -> tick(id));
                if (!args.get("pid-files", "").isEmpty()) {
                    sampleRss();
                    vertx.setPeriodic(60_000, id -> {
                        if (finished == deliveries.size()) {
                            vertx.cancelTimer(id);
                        }
                        sampleRss();
                    });
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
                Delivery delivery = deliveries.get(started++);
                inFlight++;
                deliver(delivery, System.currentTimeMillis(), 0);
            }
            if (started == deliveries.size() && faultAt >= deliveries.size() && faultFromMs < 0) {
                injectFault();
            }
            if (finished == deliveries.size() && faultDone.isDone() && kafkaAcked + kafkaFailed == kafkaSent) {
                vertx.cancelTimer(timer);
                elapsedMs = System.currentTimeMillis() - start;
                done.complete(this);
            }
        }

        private void deliver(Delivery delivery, long firstSentAt, int attempt) {
            if (attempt == 0 && kafkaCopies != null && faultFromMs >= 0 && faultToMs < 0) {
                copyToKafka(delivery);
            }
            long sentAt = System.currentTimeMillis();
            ops.callback(next(), delivery.user(), delivery.order()).onComplete(answer -> {
                slowestAnswerMs = Math.max(slowestAnswerMs, System.currentTimeMillis() - sentAt);
                String body = answer.succeeded() ? answer.result().bodyAsString() : null;
                if (answer.succeeded() && answer.result().statusCode() == 200 && body != null
                        && body.contains("\"SUCCESS\"")) {
                    long now = System.currentTimeMillis();
                    latencies.computeIfAbsent((int) ((now - start) / 60_000), m -> new ArrayList<>()).add(now - firstSentAt);
                    if (body.contains("\"anomaly\"")) {
                        anomalies++;
                    } else if (body.contains("\"duplicate\":true")) {
                        duplicates++;
                    } else {
                        firsts++;
                    }
                    settle();
                    return;
                }
                misses.add(new Miss(System.currentTimeMillis() - start, answer.failed()
                        ? answer.cause().getClass().getSimpleName()
                        : answer.result().statusCode() + " " + Ops.code(answer.result())));
                if (attempt == 0) {
                    retried++;
                }
                if (System.currentTimeMillis() - firstSentAt > giveUpMs) {
                    lost++;
                    settle();
                } else {
                    vertx.setTimer(backoff(attempt), t -> deliver(delivery, firstSentAt, attempt + 1));
                }
            });
        }

        private void settle() {
            inFlight--;
            finished++;
        }

        /** Each instance's resident memory now, in MB, under the storm's current minute. */
        private void sampleRss() {
            int minute = (int) ((System.currentTimeMillis() - start) / 60_000);
            for (String file : args.get("pid-files").split(",")) {
                try {
                    String pid = Files.readString(Path.of(file)).trim();
                    for (String line : Files.readAllLines(Path.of("/proc", pid, "status"))) {
                        if (line.startsWith("VmRSS:")) {
                            long kb = Long.parseLong(line.replaceAll("[^0-9]", ""));
                            rss.computeIfAbsent(minute, m -> new ArrayList<>()).add(kb / 1024);
                        }
                    }
                } catch (Exception gone) {
                    // an instance restarting: no sample this minute
                }
            }
        }

        /** The same payment on the Kafka channel, as {@code payment-callbacks} carries it (unsigned, trusted). */
        private void copyToKafka(Delivery delivery) {
            kafkaSent++;
            String tradeNo = Ops.tradeNo(delivery.user(), delivery.order());
            kafkaCopies.send(new ProducerRecord<>("payment-callbacks", tradeNo, ops.callbackBody(delivery.user(),
                    delivery.order())), (metadata, failure) -> vertx.runOnContext(x -> {
                        if (failure == null) {
                            kafkaAcked++;
                        } else {
                            kafkaFailed++;
                        }
                    }));
        }

        /** Runs the fault's command off the event loop; the storm goes on meanwhile. */
        private void injectFault() {
            faultFromMs = System.currentTimeMillis() - start;
            String command = args.get("command", "");
            Progress.say(fault + ": injecting at " + started + " deliveries" + (command.isEmpty() ? " (no fault)" : ""));
            Thread thread = new Thread(() -> {
                int exit = 0;
                try {
                    if (!command.isEmpty()) {
                        exit = new ProcessBuilder("bash", "-c", command).redirectOutput(ProcessBuilder.Redirect.INHERIT)
                                .redirectError(ProcessBuilder.Redirect.INHERIT).start().waitFor();
                    }
                } catch (Exception e) {
                    exit = 255;
                }
                int code = exit;
                vertx.runOnContext(x -> {
                    faultExit = code;
                    faultToMs = System.currentTimeMillis() - start;
                    faultDone.complete(null);
                });
            }, "fault");
            thread.setDaemon(true);
            thread.start();
        }
    }

    // ---------------------------------------------------------------------------------- accounts

    private void awaitCoupons(Connection db, int orders, long seconds) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline && count(db, "SELECT count(*) FROM coupons WHERE user_id LIKE ?") < orders) {
            Thread.sleep(500);
        }
    }

    private void sql(Connection db, JsonObject accounts) throws SQLException {
        accounts.put("ordersPaid", count(db, "SELECT count(*) FROM orders WHERE user_id LIKE ? AND status = 'PAID'"));
        accounts.put("ordersNotPaid", count(db, "SELECT count(*) FROM orders WHERE user_id LIKE ? AND status <> 'PAID'"));
        accounts.put("paidWithoutExactlyOneCoupon", count(db, """
                SELECT count(*) FROM orders o WHERE o.user_id LIKE ? AND o.status = 'PAID'
                  AND (SELECT count(*) FROM coupons c WHERE c.source_key = 'paid:' || o.id) <> 1"""));
        accounts.put("couponsWithoutPaidOrder", count(db, """
                SELECT count(*) FROM coupons c WHERE c.user_id LIKE ? AND NOT EXISTS
                  (SELECT 1 FROM orders o WHERE c.source_key = 'paid:' || o.id AND o.status = 'PAID')"""));
        accounts.put("coupons", count(db, "SELECT count(*) FROM coupons WHERE user_id LIKE ?"));
        // the archive counts too (the soak archives as it goes): one DONE record per order, in one
        // of the two tables, and no key in both
        String done = """
                SELECT key FROM dedup_record WHERE scope = 'payment-callback' AND key LIKE ? AND status = 'DONE'
                UNION ALL
                SELECT key FROM dedup_record_archive WHERE scope = 'payment-callback' AND key LIKE ? AND status = 'DONE'""";
        accounts.put("callbackRecordsDone", count(db, "SELECT count(*) FROM (" + done + ") r"));
        accounts.put("callbackKeysDone", count(db, "SELECT count(DISTINCT key) FROM (" + done + ") r"));
        accounts.put("callbackRecordsArchived", count(db, """
                SELECT count(*) FROM dedup_record_archive WHERE scope = 'payment-callback' AND key LIKE ?"""));
        accounts.put("callbackRecordsNotDone", count(db, """
                SELECT count(*) FROM dedup_record WHERE scope = 'payment-callback' AND key LIKE ? AND status <> 'DONE'"""));
        accounts.put("anomaliesStored", count(db, "SELECT count(*) FROM payment_anomaly WHERE trade_no LIKE ?"));
        accounts.put("outboxUnpublished", count(db, """
                SELECT count(*) FROM outbox_event e WHERE e.published_at IS NULL AND e.event_key IN
                  (SELECT 'paid:' || o.id FROM orders o WHERE o.user_id LIKE ?)"""));
    }

    private long count(Connection db, String sql) throws SQLException {
        return count(db, prefix, sql);
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
        int[] paid = {0};
        int[] coupons = {0};
        int[] usersMiscounted = {0};
        List<Future<?>> pending = new ArrayList<>();
        byUser.forEach((user, list) -> {
            for (Ops.Order order : list) {
                pending.add(get(user, "/api/orders/" + order.id()).onSuccess(r -> {
                    if ("PAID".equals(r.bodyAsJsonObject().getString("status"))) {
                        paid[0]++;
                    }
                }));
            }
            pending.add(get(user, "/api/users/" + user + "/coupons").onSuccess(r -> {
                int n = r.bodyAsJsonArray().size();
                coupons[0] += n;
                if (n != list.size()) {
                    usersMiscounted[0]++;
                }
            }));
        });
        await(Future.all(pending));
        accounts.put("apiOrdersPaid", paid[0]).put("apiCoupons", coupons[0])
                .put("apiUsersWithWrongCouponCount", usersMiscounted[0]);
    }

    private Future<HttpResponse<Buffer>> get(String user, String path) {
        return retry(() -> next().get(path).putHeader("X-User-Id", user).send(), r -> r.statusCode() == 200);
    }

    private long deadLetters() throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, settings.kafka()))) {
            Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
            admin.describeTopics(DEAD_LETTER_TOPICS).allTopicNames().get(30, TimeUnit.SECONDS)
                    .forEach((topic, description) -> description.partitions().forEach(
                            p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest())));
            return admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).values().stream()
                    .mapToLong(info -> info.offset()).sum();
        }
    }

    /** Polls GET /admin/reconciliation until healthy, at most {@code seconds} after {@code since}. */
    private JsonObject reconciliation(long seconds, long since) throws InterruptedException {
        long deadline = since + TimeUnit.SECONDS.toNanos(seconds);
        JsonObject report = null;
        while (true) {
            HttpResponse<Buffer> r = await(next().get("/admin/reconciliation")
                    .putHeader("X-Admin-Token", adminToken).send()
                    .recover(e -> Future.succeededFuture(null)));
            if (r != null && r.statusCode() == 200) {
                report = r.bodyAsJsonObject();
                if (report.getBoolean("healthy", false) || System.nanoTime() > deadline) {
                    break;
                }
            } else if (System.nanoTime() > deadline) {
                break;
            }
            Thread.sleep(1000);
        }
        JsonObject counts = new JsonObject();
        if (report != null) {
            report.getJsonObject("checks").forEach(e -> counts.put(e.getKey(),
                    ((JsonObject) e.getValue()).getLong("count")));
        }
        return new JsonObject()
                .put("healthy", report != null && report.getBoolean("healthy", false))
                .put("afterSeconds", Load.round((System.nanoTime() - since) / 1e9, 1))
                .put("checks", counts);
    }

    // ----------------------------------------------------------------------------------- verdict

    private JsonObject verdict(int orders, int perOrder, Storm storm, JsonObject a, JsonObject rec, JsonObject peak) {
        long grace = args.number("grace", 10) * 1000;
        long faultTo = storm.faultToMs < 0 ? storm.faultFromMs : storm.faultToMs;
        List<Miss> outside = storm.misses.stream()
                .filter(m -> m.atMs() < storm.faultFromMs || m.atMs() > faultTo + grace).toList();
        Map<String, Integer> kinds = new LinkedHashMap<>();
        storm.misses.forEach(m -> kinds.merge(m.what(), 1, Integer::sum));
        List<String> wrong = new ArrayList<>();
        check(wrong, storm.faultExit == 0, "fault command exited " + storm.faultExit);
        check(wrong, storm.lost == 0, storm.lost + " deliveries never answered SUCCESS");
        check(wrong, storm.kafkaFailed == 0, storm.kafkaFailed + " Kafka copies not acknowledged by the broker");
        check(wrong, outside.isEmpty(), outside.size() + " answers not SUCCESS outside the fault");
        check(wrong, storm.anomalies == 0 && a.getLong("anomaliesStored") == 0, "anomalies reported");
        JsonObject losses = null;
        if (Boolean.parseBoolean(args.get("losses-expected", "false"))) {
            losses = losses(orders, a, rec.getJsonObject("checks"), wrong);
        } else {
            check(wrong, a.getLong("ordersPaid") == orders && a.getLong("apiOrdersPaid") == orders, "orders not all PAID");
            check(wrong, a.getLong("paidWithoutExactlyOneCoupon") == 0, "paid orders without exactly one coupon");
            check(wrong, a.getLong("couponsWithoutPaidOrder") == 0, "coupons without a paid order");
            check(wrong, a.getLong("coupons") == orders && a.getLong("apiCoupons") == orders
                    && a.getLong("apiUsersWithWrongCouponCount") == 0, "coupon count is not one per order");
            check(wrong, a.getLong("callbackRecordsDone") == orders && a.getLong("callbackKeysDone") == orders
                    && a.getLong("callbackRecordsNotDone") == 0,
                    "dedup records are not one DONE per order");
            check(wrong, rec.getBoolean("healthy"), "reconciliation not healthy: " + rec.getJsonObject("checks").encode());
        }
        check(wrong, a.getLong("outboxUnpublished") == 0, "outbox events left unpublished");
        check(wrong, a.getLong("deadLettered") == 0, "records dead-lettered");
        boolean pass = wrong.isEmpty();
        String line = String.format(
                "%-17s %5d orders × %d = %5d deliveries | not SUCCESS %4d (outside fault %d), %d retried, lost %d, "
                        + "slowest answer %.1f s | first %d, dup %d | PAID %d, coupons %d, orphans %d, DLQ %d | "
                        + "reconciled in %.0f s | %s",
                fault, orders, perOrder, storm.deliveries.size(), storm.misses.size(), outside.size(), storm.retried, storm.lost,
                storm.slowestAnswerMs / 1000.0,
                storm.firsts, storm.duplicates, a.getLong("ordersPaid"), a.getLong("coupons"),
                a.getLong("couponsWithoutPaidOrder"), a.getLong("deadLettered"), rec.getDouble("afterSeconds"),
                pass ? "PASS" : "FAIL: " + String.join("; ", wrong));
        JsonObject note = faultNote();
        if (!note.isEmpty()) {
            line = line + " |" + note.stream().map(e -> " " + e.getKey() + " " + e.getValue()).reduce("", String::concat);
        }
        if (losses != null) {
            line = line + String.format(" | acknowledged then lost: %d payments (orders back to WAIT_PAY %d, "
                            + "callback records gone %d, coupons without a paid order %d); reconciliation shows "
                            + "DONE marks without a record %d, coupons without a paid order %d",
                    losses.getLong("payments"), losses.getLong("ordersNotPaid"), losses.getLong("callbackRecordsGone"),
                    losses.getLong("couponsWithoutPaidOrder"), losses.getLong("reportedMarksWithoutRecord"),
                    losses.getLong("reportedCouponsWithoutPaidOrder"));
        }
        JsonObject soak = soak(storm);
        if (soak != null) {
            double achieved = storm.deliveries.size() * 1000.0 / Math.max(1, storm.elapsedMs);
            soak.put("ratePerSecond", Load.round(storm.rate, 0)).put("achievedPerSecond", Load.round(achieved, 0))
                    .put("peak", peak);
            line = line + String.format(" | soak %d min at %.0f deliveries/s (asked %.0f%s): p99 %s ms, "
                            + "slope %+.2f ms/min; RSS %s MB, slope %+.2f MB/min",
                    soak.getJsonArray("minutes").size(), achieved, storm.rate,
                    peak == null ? "" : String.format(", half the first-delivery peak %.0f/s", peak.getDouble("perSecond")),
                    soak.getString("p99Range"), soak.getDouble("p99SlopeMsPerMin"),
                    soak.getString("rssRange"), soak.getDouble("rssSlopeMbPerMin"));
        }
        return new JsonObject()
                .put("soak", soak)
                .put("fault", fault)
                .put("orders", orders)
                .put("deliveriesPerOrder", perOrder)
                .put("deliveries", storm.deliveries.size())
                .put("stormSeconds", Load.round(storm.elapsedMs / 1000.0, 1))
                .put("faultFromSeconds", Load.round(storm.faultFromMs / 1000.0, 1))
                .put("faultToSeconds", Load.round(faultTo / 1000.0, 1))
                .put("graceSeconds", grace / 1000)
                .put("answers", new JsonObject().put("first", storm.firsts).put("duplicate", storm.duplicates)
                        .put("anomaly", storm.anomalies).put("notSuccess", storm.misses.size())
                        .put("notSuccessOutsideFault", outside.size()).put("deliveriesRetried", storm.retried)
                        .put("lost", storm.lost).put("kafkaCopies", storm.kafkaSent)
                        .put("slowestAnswerMs", storm.slowestAnswerMs)
                        .put("notSuccessKinds", new JsonObject(new LinkedHashMap<>(kinds))))
                .put("accounts", a)
                .put("faultNote", note)
                .put("losses", losses)
                .put("reconciliation", rec)
                .put("problems", new JsonArray(wrong))
                .put("pass", pass)
                .put("line", line);
    }

    /**
     * What a failover without a synchronous standby took back of what had been acknowledged (every
     * delivery was answered SUCCESS, so every order was paid as far as the gateway knows), and
     * whether the reconciliation report shows all of it.
     */
    private static JsonObject losses(int orders, JsonObject a, JsonObject reported, List<String> wrong) {
        long notPaid = orders - a.getLong("ordersPaid");
        long recordsGone = orders - a.getLong("callbackKeysDone");
        long marks = reported.getLong(MARKS_WITHOUT_RECORD, 0L);
        long orphans = reported.getLong("couponsWithoutPaidOrder", 0L);
        check(wrong, marks >= recordsGone, recordsGone + " callback records lost, the report shows " + marks);
        check(wrong, orphans == a.getLong("couponsWithoutPaidOrder"), a.getLong("couponsWithoutPaidOrder")
                + " coupons without a paid order, the report shows " + orphans);
        return new JsonObject()
                .put("payments", Math.max(notPaid, recordsGone))
                .put("ordersNotPaid", notPaid)
                .put("callbackRecordsGone", recordsGone)
                .put("couponsWithoutPaidOrder", a.getLong("couponsWithoutPaidOrder"))
                .put("reportedMarksWithoutRecord", marks)
                .put("reportedCouponsWithoutPaidOrder", orphans);
    }

    /** The {@code name value} lines the fault's command wrote, in order; empty without any. */
    private JsonObject faultNote() {
        JsonObject note = new JsonObject(new LinkedHashMap<>());
        String file = args.get("fault-note", "");
        try {
            if (!file.isEmpty() && Files.exists(Path.of(file))) {
                for (String line : Files.readAllLines(Path.of(file))) {
                    String[] pair = line.trim().split("\\s+", 2);
                    if (pair.length == 2) {
                        note.put(pair[0], pair[1]);
                    }
                }
            }
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
            long p50 = sorted.get(sorted.size() / 2);
            long p99th = sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(sorted.size() * 0.99) - 1));
            List<Long> memory = storm.rss.getOrDefault(minute, List.of());
            minutes.add(new JsonObject().put("minute", minute).put("answered", sorted.size()).put("p50Ms", p50)
                    .put("p99Ms", p99th).put("rssMb", new JsonArray(new ArrayList<>(memory))));
            p99.add(new double[] {minute, p99th});
            memory.forEach(mb -> rss.add(new double[] {minute, mb}));
        });
        return new JsonObject()
                .put("minutes", minutes)
                .put("p99Range", range(p99))
                .put("p99SlopeMsPerMin", Load.round(slope(p99), 2))
                .put("rssRange", range(rss))
                .put("rssSlopeMbPerMin", Load.round(slope(rss), 2));
    }

    private static String range(List<double[]> points) {
        double min = points.stream().mapToDouble(p -> p[1]).min().orElse(0);
        double max = points.stream().mapToDouble(p -> p[1]).max().orElse(0);
        return String.format("%.0f–%.0f", min, max);
    }

    private static double slope(List<double[]> points) {
        int n = points.size();
        if (n < 2) {
            return 0;
        }
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

    private static void check(List<String> wrong, boolean ok, String problem) {
        if (!ok) {
            wrong.add(problem);
        }
    }

    private static <T> T await(Future<T> future) {
        return await(future, 10);
    }

    private static <T> T await(Future<T> future, long minutes) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(minutes, TimeUnit.MINUTES);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
