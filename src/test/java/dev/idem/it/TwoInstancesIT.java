package dev.idem.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Gateway;
import dev.idem.testing.Http;
import dev.idem.testing.Metrics;
import dev.idem.testing.Storm;
import dev.idem.testing.Topics;
import io.restassured.RestAssured;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.common.TopicPartition;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Two real instances of the packaged service in the same consumer groups, sharing one database and
 * one outbox, driven like an operator would: over HTTP, Kafka and JDBC. Duplicates that reach
 * different instances, and an instance killed in the middle of a stream, must change nothing.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TwoInstancesIT {

    static final String SECRET = "it-callback-secret";
    static final String BOOTSTRAP = "127.0.0.1:9092";
    static final Map<String, String> ENV = Map.of(
            "IDEM_CALLBACK_SECRET", SECRET,
            "IDEM_ADMIN_TOKEN", "it-admin-token",
            "QUARKUS_DATASOURCE_REACTIVE_URL", ServiceProcess.DATABASE,
            "QUARKUS_REDIS_HOSTS", "redis://127.0.0.1:6379/5");
    static final String GRANTS = "coupon-grants";
    static final String CALLBACKS = "payment-callbacks";
    static final String GRANTS_GROUP = "idem-coupon-grants";
    static final String CALLBACKS_GROUP = "idem-payment-callbacks";
    static final Duration READY = Duration.ofSeconds(90);
    /** Long enough for the broker to expire a killed member (the channels' 6 s session) and rebalance, with room. */
    static final Duration EFFECTS = Duration.ofSeconds(180);

    static final Jdbc db = new Jdbc("jdbc:" + ServiceProcess.DATABASE, "idem", "idem");
    static final RedisDb redis = new RedisDb("127.0.0.1", 6379, 5);
    static final Http http = new Http();
    static ServiceProcess a;
    static ServiceProcess b;
    static KafkaTestClient kafka;
    static GroupProgress groups;

    /** The test's own Kafka clients log every connection at INFO; the instances' logs are what matter. */
    static final Logger KAFKA_CLIENTS = Logger.getLogger("org.apache.kafka");

    @BeforeAll
    static void startTwoInstances() {
        KAFKA_CLIENTS.setLevel(Level.WARNING);
        a = ServiceProcess.start("instance-a", ENV);
        b = ServiceProcess.start("instance-b", ENV);
        a.awaitReady(READY);
        b.awaitReady(READY);
        kafka = new KafkaTestClient();
        groups = new GroupProgress(BOOTSTRAP);
    }

    @AfterAll
    static void stopEverything() {
        for (AutoCloseable resource : new AutoCloseable[] {kafka, groups}) {
            closeQuietly(resource);
        }
        ServiceProcess.stopAll(a, b);
    }

    @Test
    @Order(0)
    @DisplayName("a start warns about nothing the configuration does on purpose")
    void aStartWarnsAboutNothingDoneOnPurpose() throws IOException {
        for (ServiceProcess instance : List.of(a, b)) {
            String log = Files.readString(instance.log());
            assertTrue(log.contains("Configured topics for channel 'coupon-grants'"),
                    instance.name + " wired its consumers:\n" + instance.logTail());
            assertFalse(log.contains("SRMSG18235"), instance.name + " warned about the unchecked record age");
        }
    }

    // ------------------------------------------------------------------------------------------
    // Test 1: a storm of duplicates over both instances and both channels

    static final int ORDERS = 320;
    static final int USERS = 16;
    static final int REST_COPIES = 6;
    static final int KAFKA_COPIES = 2;

    @Test
    @Order(1)
    @DisplayName("duplicates reaching different instances still have one effect, Redis flushed midway")
    void duplicatesReachingDifferentInstancesStillHaveOneEffect() throws Exception {
        long started = System.nanoTime();
        List<ServiceProcess> both = List.of(a, b);
        List<Placed> orders = createOrders("it-" + UUID.randomUUID(), ORDERS, USERS, both);

        CompletableFuture<Void> viaKafka = CompletableFuture.runAsync(() -> produceCallbacks(orders, KAFKA_COPIES));
        long[] keysFlushed = {-1};
        Map<String, Integer> firsts = deliverCallbacks(orders, REST_COPIES, both, () -> {
            keysFlushed[0] = redis.size();
            redis.flush();
        });
        viaKafka.get(120, TimeUnit.SECONDS);
        assertTrue(keysFlushed[0] > 0, "the storm left nothing in Redis to flush: " + keysFlushed[0]);
        Map<TopicPartition, Long> produced = groups.endOffsets(CALLBACKS);

        firsts.forEach((orderId, n) -> assertTrue(n <= 1, n + " first deliveries answered for order " + orderId));
        awaitGroupPast(CALLBACKS_GROUP, produced);
        assertPaidExactlyOnce(orders);
        awaitOneCouponPerOrder(orders);
        assertOwnersSeeExactlyTheirCoupons(orders, both);
        assertNoneDeadLettered(CALLBACKS + "-dlq", orders.stream().map(Placed::tradeNo).collect(Collectors.toSet()));

        int restFirsts = firsts.values().stream().mapToInt(Integer::intValue).sum();
        System.out.printf("[TwoInstancesIT] duplicates: %d orders by %d users over 2 instances (%s); %d REST"
                        + " deliveries (%d answered first, the other %d orders won by Kafka) + %d Kafka deliveries;"
                        + " Redis flushed midway (%d keys); each order paid once, with one outbox event and one"
                        + " coupon; %.1f s%n",
                ORDERS, USERS, ServiceProcess.isNative() ? "native executables" : "jars", ORDERS * REST_COPIES,
                restFirsts, ORDERS - restFirsts, ORDERS * KAFKA_COPIES, keysFlushed[0], seconds(started));
    }

    /** A created order and its owner. */
    record Placed(String orderId, String userId) {
        String tradeNo() {
            return Storm.tradeNo(orderId);
        }

        String bizKey() {
            return "paid:" + orderId;
        }

        String callback() {
            return Gateway.callback(tradeNo(), orderId, Storm.AMOUNT, "SUCCESS");
        }
    }

    static final String ORDER_BODY = "{\"amountCents\":" + Storm.AMOUNT + ",\"currency\":\"CNY\"}";

    /** {@code count} orders of {@code users} users, submitted round-robin over {@code via}. */
    static List<Placed> createOrders(String run, int count, int users, List<ServiceProcess> via) {
        List<String> owners = new ArrayList<>();
        List<Supplier<HttpRequest>> submits = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String user = run + "-u" + (i % users);
            ServiceProcess instance = via.get(i % via.size());
            String key = "order-" + i;
            owners.add(user);
            submits.add(() -> post(instance, "/api/orders", ORDER_BODY)
                    .header("X-User-Id", user).header("Idempotency-Key", key).build());
        }
        List<Http.Answer> answers = http.all(submits, 32, null);
        List<Placed> orders = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            assertEquals(201, answers.get(i).status(), answers.get(i).body());
            orders.add(new Placed(new JsonObject(answers.get(i).body()).getString("orderId"), owners.get(i)));
        }
        return orders;
    }

    /**
     * Delivers each order's SUCCESS {@code copies} times, shuffled, concurrently, round-robin over
     * {@code via}, each delivery signed afresh; {@code midway} runs when half were answered. Every
     * answer must be 200 SUCCESS; answers how many deliveries of each order were answered as the
     * first one.
     */
    static Map<String, Integer> deliverCallbacks(List<Placed> orders, int copies, List<ServiceProcess> via,
            Runnable midway) {
        List<Placed> deliveries = new ArrayList<>();
        orders.forEach(order -> deliveries.addAll(Collections.nCopies(copies, order)));
        Collections.shuffle(deliveries, new Random(7));
        List<Supplier<HttpRequest>> requests = new ArrayList<>();
        for (int i = 0; i < deliveries.size(); i++) {
            String body = deliveries.get(i).callback();
            ServiceProcess instance = via.get(i % via.size());
            requests.add(() -> Gateway.signed(post(instance, "/api/payments/callback", body), SECRET, body));
        }
        List<Http.Answer> answers = http.all(requests, 64, midway);
        Map<String, Integer> firsts = new HashMap<>();
        orders.forEach(order -> firsts.put(order.orderId(), 0));
        for (int i = 0; i < answers.size(); i++) {
            if (Storm.firstDelivery(answers.get(i))) {
                firsts.merge(deliveries.get(i).orderId(), 1, Integer::sum);
            }
        }
        return firsts;
    }

    /** The same notifications on the internal channel, shuffled, keyed by trade number. */
    static void produceCallbacks(List<Placed> orders, int copies) {
        List<Placed> deliveries = new ArrayList<>();
        orders.forEach(order -> deliveries.addAll(Collections.nCopies(copies, order)));
        Collections.shuffle(deliveries, new Random(11));
        deliveries.forEach(order -> kafka.send(CALLBACKS, null, order.tradeNo(), order.callback()));
    }

    static void assertPaidExactlyOnce(List<Placed> orders) {
        List<String> ids = orders.stream().map(Placed::orderId).toList();
        List<String> bizKeys = orders.stream().map(Placed::bizKey).toList();
        List<String> dedupKeys = orders.stream().map(o -> o.tradeNo() + ":SUCCESS").toList();
        int n = orders.size();
        assertEquals(n, db.count("SELECT count(*) FROM orders WHERE id = ANY(?) AND status = 'PAID'"
                + " AND trade_no = 'T-' || id AND paid_at IS NOT NULL", ids), "orders paid with their trade number");
        assertEquals(n, db.count("SELECT count(*) FROM outbox_event WHERE event_key = ANY(?)", bizKeys),
                "outbox events, one per paid order");
        assertEquals(n, db.count("SELECT count(DISTINCT event_key) FROM outbox_event"
                + " WHERE topic = 'coupon-grants' AND event_key = ANY(?)", bizKeys));
        assertEquals(n, db.count("SELECT count(*) FROM dedup_record WHERE scope = 'payment-callback'"
                + " AND key = ANY(?) AND status = 'DONE'", dedupKeys), "one finished dedup record per payment");
        assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = ANY(?)", ids),
                "anomalies recorded for these orders");
    }

    /** The grants travel outbox, Kafka, consumer: wait for all of them, then count exactly. */
    static void awaitOneCouponPerOrder(List<Placed> orders) {
        List<String> bizKeys = orders.stream().map(Placed::bizKey).toList();
        String sql = "SELECT count(*) FROM coupons WHERE source_key = ANY(?)";
        Awaitility.await("one coupon per paid order").atMost(EFFECTS).pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> assertEquals(bizKeys.size(), db.count(sql, bizKeys), "coupons of paid orders"));
        assertEquals(bizKeys.size(), db.count("SELECT count(*) FROM coupons WHERE order_id = ANY(?)",
                orders.stream().map(Placed::orderId).toList()), "coupons carrying their order");
    }

    /** Each owner lists exactly the coupons of their own orders, whichever instance answers. */
    static void assertOwnersSeeExactlyTheirCoupons(List<Placed> orders, List<ServiceProcess> via) {
        Map<String, Set<String>> expected = orders.stream().collect(Collectors.groupingBy(Placed::userId,
                Collectors.mapping(Placed::bizKey, Collectors.toSet())));
        int i = 0;
        for (Map.Entry<String, Set<String>> owner : expected.entrySet()) {
            ServiceProcess instance = via.get(i++ % via.size());
            String user = owner.getKey();
            JsonArray coupons = new JsonArray(get(instance, "/api/users/" + user + "/coupons", user));
            List<String> sources = coupons.stream().map(c -> ((JsonObject) c).getString("sourceKey")).toList();
            assertEquals(owner.getValue().size(), sources.size(), "coupons listed for " + user);
            assertEquals(owner.getValue(), new HashSet<>(sources), "coupons listed for " + user);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Tests 2 and 4: one instance killed, or stopped, while a stream of grants is consumed

    static final int GRANTS_COUNT = 480;
    static final int GRANT_USERS = 8;
    /** The stream is spread over this long, so that the kill and the restart happen in its middle. */
    static final Duration STREAM = Duration.ofSeconds(10);
    static final int DOWNTIME_ORDERS = 60;
    static final int DOWNTIME_COPIES = 4;

    @Test
    @Order(2)
    @DisplayName("an instance killed mid-stream loses and doubles nothing")
    void anInstanceKilledMidStreamLosesAndDoublesNothing() throws Exception {
        downMidStream("kill", "SIGKILLed", () -> {
            long pid = b.pid();
            b.kill();
            assertTrue(ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true), "the killed process " + pid + " is gone");
        });
    }

    /**
     * Kubernetes allows a stopped pod 30 s before it kills it; a rolling deploy waits this out per
     * instance. The Kafka connector's graceful close sleeps twice the poll timeout for each consumer
     * holding partitions, one after the other; the extension sets a poll timeout of 100 ms for that.
     */
    static final Duration STOP_GRACE = Duration.ofSeconds(10);

    @Test
    @Order(4)
    @DisplayName("an instance stopped mid-stream, as a rolling deploy does, leaves in time and loses and doubles nothing")
    void anInstanceStoppedMidStreamLeavesInTimeAndLosesAndDoublesNothing() throws Exception {
        downMidStream("stop", "stopped (SIGTERM)", () -> {
            Duration took = b.stop(STOP_GRACE).orElseThrow(
                    () -> new AssertionError("instance-b still running " + STOP_GRACE + " after SIGTERM; killed"));
            System.out.printf("[TwoInstancesIT] stop: instance-b exited %.1f s after SIGTERM%n", took.toMillis() / 1e3);
        });
    }

    /**
     * A stream of grants (each twice) while instance b is taken down by {@code takeDown} once a
     * quarter of the coupons exist; a serves callbacks alone meanwhile, b starts again, and every
     * grant and callback has had exactly one effect, every partition consumed again.
     */
    static void downMidStream(String label, String how, Runnable takeDown) throws Exception {
        String run = "it-" + label + "-" + UUID.randomUUID();
        List<JsonObject> grants = IntStream.range(0, GRANTS_COUNT)
                .mapToObj(i -> grant(run + "-" + i, run + "-u" + i % GRANT_USERS)).toList();
        long started = System.nanoTime();
        CompletableFuture<Void> stream = CompletableFuture.runAsync(() -> produceTwice(grants, STREAM));

        long atDown = awaitCoupons(run, GRANTS_COUNT / 4);
        double downAfter = seconds(started);
        long downAt = System.nanoTime();
        long downPid = b.pid();
        takeDown.run();

        // the survivor keeps serving while the other one is down
        List<Placed> downtimeOrders = createOrders(run + "-down", DOWNTIME_ORDERS, 3, List.of(a));
        Map<String, Integer> firsts = deliverCallbacks(downtimeOrders, DOWNTIME_COPIES, List.of(a), null);
        firsts.forEach((orderId, n) -> assertEquals(1, n, "first deliveries answered for order " + orderId));

        b.restart().awaitReady(READY);
        double downFor = seconds(downAt);
        stream.get(STREAM.toSeconds() + 120, TimeUnit.SECONDS);
        Map<TopicPartition, Long> produced = groups.endOffsets(GRANTS);

        awaitCoupons(run, GRANTS_COUNT);
        double allAfter = seconds(started);
        assertExactlyOneCouponPerGrant(run, grants);
        assertNoneDeadLettered(GRANTS + "-dlq",
                grants.stream().map(TwoInstancesIT::bizKey).collect(Collectors.toSet()));
        assertPaidExactlyOnce(downtimeOrders);
        awaitOneCouponPerOrder(downtimeOrders);
        awaitGroupPast(GRANTS_GROUP, produced);
        double committedAfter = seconds(started);
        double consumedByRestarted = assertEveryPartitionConsumedAgain();

        System.out.printf("[TwoInstancesIT] %s: %d grants x2 records over %d partitions in %d s; instance-b (pid %d)"
                        + " %s at %d/%d coupons after %.1f s (%.0f grants/s), down %.1f s until ready again;"
                        + " all %d coupons after %.1f s (%.0f grants/s overall), every partition committed past"
                        + " the stream after %.1f s; %d orders x %d callbacks served by instance-a alone meanwhile;"
                        + " restarted instance-b handled %.0f grants; %.1f s%n",
                label, GRANTS_COUNT, Topics.PARTITIONS, STREAM.toSeconds(), downPid, how, atDown, GRANTS_COUNT,
                downAfter, atDown / downAfter, downFor, GRANTS_COUNT, allAfter, GRANTS_COUNT / allAfter,
                committedAfter, DOWNTIME_ORDERS, DOWNTIME_COPIES, consumedByRestarted, seconds(started));
    }

    // Test 3: one instance frozen (SIGSTOP) while a stream of grants is consumed, then continued

    /** Past the consumers' session timeout (10 s), so that the group takes the frozen one's partitions away. */
    static final Duration FROZEN = Duration.ofSeconds(15);

    @Test
    @Order(3)
    @DisplayName("an instance frozen mid-stream and continued loses and doubles nothing")
    void anInstanceFrozenMidStreamAndContinuedLosesAndDoublesNothing() throws Exception {
        String run = "it-frozen-" + UUID.randomUUID();
        List<JsonObject> grants = IntStream.range(0, GRANTS_COUNT)
                .mapToObj(i -> grant(run + "-" + i, run + "-u" + i % GRANT_USERS)).toList();
        long started = System.nanoTime();
        CompletableFuture<Void> stream = CompletableFuture.runAsync(() -> produceTwice(grants, STREAM));

        long atFreeze = awaitCoupons(run, GRANTS_COUNT / 4);
        signal("STOP", b.pid());
        long frozenAt = System.nanoTime();
        // the other one serves meanwhile, and takes the frozen one's partitions over
        List<Placed> frozenOrders = createOrders(run + "-frozen", DOWNTIME_ORDERS, 3, List.of(a));
        deliverCallbacks(frozenOrders, DOWNTIME_COPIES, List.of(a), null)
                .forEach((orderId, n) -> assertEquals(1, n, "first deliveries answered for order " + orderId));
        pauseUntil(frozenAt + FROZEN.toNanos());
        signal("CONT", b.pid());

        // what the frozen one had in hand when it stopped must not count twice once it goes on
        stream.get(STREAM.toSeconds() + 120, TimeUnit.SECONDS);
        Map<TopicPartition, Long> produced = groups.endOffsets(GRANTS);
        awaitCoupons(run, GRANTS_COUNT);
        assertExactlyOneCouponPerGrant(run, grants);
        assertNoneDeadLettered(GRANTS + "-dlq", grants.stream().map(TwoInstancesIT::bizKey).collect(Collectors.toSet()));
        assertPaidExactlyOnce(frozenOrders);
        awaitOneCouponPerOrder(frozenOrders);
        awaitGroupPast(GRANTS_GROUP, produced);
        // and it serves again
        List<Placed> after = createOrders(run + "-after", 20, 2, List.of(b));
        deliverCallbacks(after, 3, List.of(a, b), null);
        assertPaidExactlyOnce(after);

        System.out.printf("[TwoInstancesIT] freeze: %d grants x2 records; instance-b frozen at %d/%d coupons for %d s,"
                        + " %d orders x %d callbacks served by instance-a alone meanwhile, all coupons exact; %.1f s%n",
                GRANTS_COUNT, atFreeze, GRANTS_COUNT, FROZEN.toSeconds(), DOWNTIME_ORDERS, DOWNTIME_COPIES,
                seconds(started));
    }

    /** {@code kill -<name> pid}: STOP freezes a process as a stuck host would, CONT lets it go on. */
    static void signal(String name, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + name + " " + pid);
    }

    static JsonObject grant(String bizKey, String userId) {
        return new JsonObject().put("bizKey", bizKey).put("userId", userId).put("templateId", "IT").putNull("orderId");
    }

    static String bizKey(JsonObject grant) {
        return grant.getString("bizKey");
    }

    /**
     * Each grant twice, spread evenly over {@code over}, on two different partitions; the pairs go
     * through every combination of partitions, so that whichever partitions the killed instance
     * held, some grants had both copies there.
     */
    static void produceTwice(List<JsonObject> grants, Duration over) {
        int partitions = Topics.PARTITIONS;
        long started = System.nanoTime();
        for (int i = 0; i < grants.size(); i++) {
            pauseUntil(started + over.toNanos() * i / grants.size());
            int first = i % partitions;
            int second = (first + 1 + (i / partitions) % (partitions - 1)) % partitions;
            kafka.send(GRANTS, first, bizKey(grants.get(i)), grants.get(i).encode());
            kafka.send(GRANTS, second, bizKey(grants.get(i)), grants.get(i).encode());
        }
    }

    /** Coupons whose source key belongs to {@code run}: waits until there are at least {@code atLeast}. */
    static long awaitCoupons(String run, long atLeast) {
        return Awaitility.await("at least " + atLeast + " coupons of " + run).atMost(EFFECTS)
                .pollInterval(Duration.ofMillis(100))
                .until(() -> db.count("SELECT count(*) FROM coupons WHERE source_key LIKE ?", run + "-%"),
                        n -> n >= atLeast);
    }

    /** Every grant has its coupon, for its user, finished once in the pipeline; none twice, none skipped. */
    static void assertExactlyOneCouponPerGrant(String run, List<JsonObject> grants) {
        String like = run + "-%";
        Map<String, String> expected = grants.stream()
                .collect(Collectors.toMap(TwoInstancesIT::bizKey, g -> g.getString("userId")));
        List<String> rows = db.strings(
                "SELECT source_key || ' ' || user_id FROM coupons WHERE source_key LIKE ?", like);
        Map<String, String> granted = rows.stream().map(r -> r.split(" ", 2))
                .collect(Collectors.toMap(r -> r[0], r -> r[1]));
        Set<String> missing = new TreeSet<>(expected.keySet());
        missing.removeAll(granted.keySet());
        assertEquals(Set.of(), missing, "grants without a coupon");
        assertEquals(expected, granted, "one coupon per bizKey, for the grant's user");
        assertEquals(grants.size(), rows.size(), "coupons of this run");
        assertEquals(grants.size(), db.count("SELECT count(*) FROM dedup_record WHERE scope = 'coupon-grant'"
                + " AND key LIKE ? AND status = 'DONE'", like), "finished coupon-grant records");
    }

    /**
     * After the recovery the group consumes every partition again: one probe grant per partition
     * gets its coupon, and the restarted instance takes its share. A killed instance's partitions
     * wait for it until the broker expires it, so it finds a backlog; a stopped one left the group at
     * once and the survivor took everything, so the restarted one gets partitions only at the
     * rebalance its return sets off: probes go on, a round per partition, until it has handled some.
     */
    static double assertEveryPartitionConsumedAgain() {
        String run = "it-probe-" + UUID.randomUUID();
        AtomicInteger rounds = new AtomicInteger();
        probeEveryPartition(run + "-0");
        Awaitility.await("the restarted instance consumes coupon grants again").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    if (grantsHandledBy(b) > 0) {
                        return true;
                    }
                    probeEveryPartition(run + "-" + rounds.incrementAndGet());
                    return false;
                });
        return grantsHandledBy(b);
    }

    /** Two probe grants per partition, each with its coupon before it returns. */
    static void probeEveryPartition(String run) {
        List<JsonObject> probes = new ArrayList<>();
        for (int p = 0; p < Topics.PARTITIONS * 2; p++) {
            JsonObject probe = grant(run + "-" + p, run + "-u0");
            probes.add(probe);
            kafka.send(GRANTS, p % Topics.PARTITIONS, bizKey(probe), probe.encode());
        }
        List<String> keys = probes.stream().map(TwoInstancesIT::bizKey).toList();
        String sql = "SELECT count(*) FROM coupons WHERE source_key = ANY(?)";
        Awaitility.await("a coupon for the probe of every partition").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertEquals(keys.size(), db.count(sql, keys), "probe coupons"));
    }

    /** Coupon grants one instance ran through its pipeline since it started, from its own metrics. */
    static double grantsHandledBy(ServiceProcess instance) {
        RestAssured.baseURI = "http://127.0.0.1";
        RestAssured.port = instance.port;
        return Metrics.scrape().value("idem_pipeline_outcomes_total", Map.of("scope", "coupon-grant"));
    }

    // ------------------------------------------------------------------------------------------
    // Shared checks and plumbing

    /** The group committed past {@code ends} on every partition: nothing stuck, nothing left to redeliver. */
    static void awaitGroupPast(String group, Map<TopicPartition, Long> ends) {
        Awaitility.await(group + " past " + ends).atMost(EFFECTS).pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> assertEquals(Map.of(), groups.behind(group, ends), group + " partitions behind"));
    }

    static void assertNoneDeadLettered(String dlq, Set<String> keys) {
        assertEquals(List.of(), kafka.readAll(dlq).stream().filter(r -> keys.contains(r.key())).toList(),
                "records of this test in " + dlq);
    }

    static HttpRequest.Builder post(ServiceProcess instance, String path, String body) {
        return HttpRequest.newBuilder(instance.uri(path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
    }

    static String get(ServiceProcess instance, String path, String user) {
        Http.Answer answer = http.all(List.of(() -> HttpRequest.newBuilder(instance.uri(path))
                .timeout(Duration.ofSeconds(30)).header("X-User-Id", user).GET().build()), 1, null).get(0);
        assertEquals(200, answer.status(), answer.body());
        return answer.body();
    }

    static void pauseUntil(long nanoTime) {
        long wait = nanoTime - System.nanoTime();
        if (wait > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    static double seconds(long sinceNanoTime) {
        return (System.nanoTime() - sinceNanoTime) / 1e9;
    }

    static void closeQuietly(AutoCloseable resource) {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (Exception e) {
            System.err.println("[TwoInstancesIT] could not close " + resource + ": " + e);
        }
    }
}
