package dev.idem.bench;

import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Coupon grants through Kafka, and the whole way from a paid callback to its coupon.
 * Coupons are counted in Postgres by user id (indexed), never by scanning source keys.
 */
final class KafkaPhases {

    private KafkaPhases() {}

    /**
     * Grants/s of the running service's {@code coupon-grants} consumer: waits until the group has
     * no backlog, warms up with a small batch, then produces N grant messages as fast as the
     * broker takes them and times the coupons' {@code granted_at}, first to last.
     */
    static void grants(Settings settings, Args args) throws Exception {
        String run = args.get("run");
        String variant = args.get("variant");
        Proc proc = new Proc(Long.parseLong(args.get("pid")), settings.clockTicks());
        JsonObject result = new JsonObject().put("variant", variant);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, settings.kafka()));
             KafkaProducer<String, String> producer = producer(settings);
             Connection db = Db.connect(settings)) {
            result.put("drain", drain(settings, admin));
            String prefix = "bench-" + run + "-" + variant;

            Progress.say("kafka (" + variant + "): warm-up with " + settings.kafkaWarmup()
                    + " grants, until the JIT is quiet");
            result.put("warmupRounds", Warmup.untilJitQuiet("kafka (" + variant + ")", round -> {
                JsonObject warmed = batch(settings, producer, db, proc, prefix + "-w" + round, settings.kafkaWarmup());
                result.put("warmup", warmed);
                Db.analyze(settings, "warm-up round " + round);
                return warmed.getJsonObject("cores").getDouble("serviceJit", 0.0);
            }));
            JsonObject warm = result.getJsonObject("warmup");

            long n = args.number("grants", settings.grants());
            if (n <= 0) {
                // about BENCH_SECONDS of work at the warm-up's pace (a warm service goes faster)
                n = Math.max(2000, Math.min(200_000, Math.round(warm.getDouble("perSecond") * settings.seconds() * 1.5)));
            }
            Progress.say("kafka (" + variant + "): " + n + " grants pre-produced to " + settings.grantsTopic());
            proc.takeRssMaxKb();
            Metrics metrics = new Metrics(args.integer("port"));
            Map<String, Double> before = metrics.snapshot();
            JsonObject measured = batch(settings, producer, db, proc, prefix, n);
            measured.put("rssMaxKb", proc.takeRssMaxKb()).put("metrics", Metrics.delta(before, metrics.snapshot()));
            result.put("measured", measured);
            result.put("group", group(settings, admin));
        } finally {
            proc.close();
        }
        Files.writeString(Path.of(args.get("out")), result.encodePrettily());
    }

    private static JsonObject batch(Settings settings, KafkaProducer<String, String> producer, Connection db,
                                    Proc proc, String user, long n) throws Exception {
        Proc.CpuSnapshot cpu = proc.cpu();
        long start = System.nanoTime();
        for (long i = 0; i < n; i++) {
            String bizKey = user + "-" + i;
            String value = "{\"bizKey\":\"" + bizKey + "\",\"userId\":\"" + user + "\",\"templateId\":\"BENCH\"}";
            producer.send(new ProducerRecord<>(settings.grantsTopic(), bizKey, value));
        }
        producer.flush();
        double produced = (System.nanoTime() - start) / 1e9;
        long deadline = start + (long) (settings.grantTimeout() * 1e9);
        long count = 0;
        long lastCount = -1;
        long lastChange = System.nanoTime();
        while (System.nanoTime() < deadline && proc.alive()) {
            count = countCoupons(db, user);
            long now = System.nanoTime();
            if (count != lastCount) {
                lastCount = count;
                lastChange = now;
            }
            Progress.line(String.format("grants %-28s %7d / %d  %5.1fs", user, count, n, (now - start) / 1e9));
            if (count >= n || now - lastChange > 60_000_000_000L) {
                break;
            }
            Thread.sleep(200);
        }
        double wall = (System.nanoTime() - start) / 1e9;
        Proc.CpuUse use = proc.since(cpu);
        JsonObject result = new JsonObject().put("messages", n).put("coupons", count)
                .put("produceSeconds", Load.round(produced, 2)).put("wallSeconds", Load.round(wall, 2));
        double span = grantSpanSeconds(db, user);
        result.put("grantSpanSeconds", Load.round(span, 3))
                .put("perSecond", Load.round(grantsPerSecond(count, span), 1))
                .put("perSecondWall", Load.round(count / wall, 1));
        result.put("cores", use.toJson());
        Progress.done(String.format("grants %-28s %d of %d coupons, %.1f/s first to last (%.1f/s wall)%s  %s",
                user, count, n, result.getDouble("perSecond"), result.getDouble("perSecondWall"),
                count < n ? "  INCOMPLETE" : "", use.line()));
        return result;
    }

    /** Waits (bounded) until the consumer group has committed every record of the topic. */
    private static JsonObject drain(Settings settings, Admin admin) throws Exception {
        long start = System.nanoTime();
        long deadline = start + (long) (settings.drainTimeout() * 1e9);
        long lag = -1;
        int members = 0;
        long first = -1;
        while (System.nanoTime() < deadline) {
            members = members(settings, admin);
            lag = lag(settings, admin);
            if (first < 0) {
                first = lag;
            }
            Progress.line(String.format("kafka: waiting for the consumer group: %d member(s), lag %d, %.0fs",
                    members, lag, (System.nanoTime() - start) / 1e9));
            if (members > 0 && lag == 0) {
                break;
            }
            Thread.sleep(500);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        Progress.done(String.format("kafka: consumer group %s: %d member(s), lag %d at start, %d after %.1f s",
                settings.grantsGroup(), members, first, lag, seconds));
        return new JsonObject().put("lagAtStart", first).put("lagAtEnd", lag).put("members", members)
                .put("seconds", Load.round(seconds, 1));
    }

    private static JsonObject group(Settings settings, Admin admin) throws Exception {
        return new JsonObject().put("members", members(settings, admin)).put("lag", lag(settings, admin));
    }

    private static int members(Settings settings, Admin admin) throws Exception {
        ConsumerGroupDescription group = admin.describeConsumerGroups(List.of(settings.grantsGroup()))
                .describedGroups().get(settings.grantsGroup()).get(10, TimeUnit.SECONDS);
        return group.members().size();
    }

    private static long lag(Settings settings, Admin admin) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(settings.grantsGroup())
                .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
        Set<TopicPartition> partitions = admin.describeTopics(List.of(settings.grantsTopic()))
                .allTopicNames().get(10, TimeUnit.SECONDS).get(settings.grantsTopic()).partitions().stream()
                .map(p -> new TopicPartition(settings.grantsTopic(), p.partition())).collect(Collectors.toSet());
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = offsets(admin, partitions, OffsetSpec.latest());
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> starts = offsets(admin, partitions,
                OffsetSpec.earliest());
        long lag = 0;
        for (TopicPartition p : partitions) {
            OffsetAndMetadata at = committed.get(p);
            // a partition the group never committed is read from its earliest record
            lag += ends.get(p).offset() - (at == null ? starts.get(p).offset() : at.offset());
        }
        return lag;
    }

    private static Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> offsets(
            Admin admin, Set<TopicPartition> partitions, OffsetSpec spec) throws Exception {
        Map<TopicPartition, OffsetSpec> query = new HashMap<>();
        partitions.forEach(p -> query.put(p, spec));
        return admin.listOffsets(query).all().get(10, TimeUnit.SECONDS);
    }

    /**
     * Callback → coupon: fresh orders are paid by an open loop of callbacks at {@code --rate}/s,
     * and each coupon's {@code granted_at} (the service's clock, same machine) is compared with
     * the moment its callback left the load generator.
     */
    static void latency(Settings settings, Args args) throws Exception {
        int port = args.integer("port");
        String user = "bench-" + args.get("run") + "-" + args.get("name", "lat");
        double rate = Math.max(1, args.decimal("rate"));
        Proc proc = new Proc(Long.parseLong(args.get("pid")), settings.clockTicks());
        JsonObject result = new JsonObject().put("rate", Load.round(rate, 1)).put("why", args.get("why", ""));
        Map<String, Long> sentMicros = new ConcurrentHashMap<>();
        try (Load load = new Load(port, proc); Connection db = Db.connect(settings)) {
            Ops ops = new Ops(settings.secret());
            if (Boolean.parseBoolean(args.get("warm-up", "false"))) {
                result.put("warmupRounds", warmCallbacks(settings, load, ops, db, proc, user + "-w", rate));
            }
            Ops.Pool pool = new Ops.Pool(user);
            int orders = (int) Math.ceil(rate * settings.seconds()) + 1;
            Progress.say("callback → coupon: " + orders + " fresh orders, then callbacks at " + Load.round(rate, 1) + "/s");
            load.closed("(new orders)", 16, 300, ops.createOrders(pool, orders));
            Load.Step step = load.open("callbacks at rate", rate, settings.seconds(), 512,
                    ops.firstDeliveries(pool, order -> sentMicros.put(order.id(), micros(Instant.now()))));
            result.put("callbacks", step.toJson());

            long expected = step.ok;
            long start = System.nanoTime();
            long count = awaitCoupons(settings, db, proc, user, expected, "after the last callback");
            double waited = (System.nanoTime() - start) / 1e9;
            Histogram latency = new Histogram(TimeUnit.HOURS.toMicros(1), 3);
            List<long[]> bySend = new ArrayList<>();
            try (PreparedStatement q = db.prepareStatement("""
                    SELECT order_id, (extract(epoch FROM granted_at) * 1000000)::bigint FROM coupons WHERE user_id = ?""")) {
                q.setString(1, user);
                try (ResultSet rs = q.executeQuery()) {
                    while (rs.next()) {
                        Long sent = sentMicros.get(rs.getString(1));
                        if (sent != null) {
                            long micros = Math.max(1, Math.min(TimeUnit.HOURS.toMicros(1), rs.getLong(2) - sent));
                            latency.recordValue(micros);
                            bySend.add(new long[] {sent, micros});
                        }
                    }
                }
            }
            // a queue that grows through the phase shows as a last tenth much slower than the first
            bySend.sort(Comparator.comparingLong(x -> x[0]));
            int tenth = Math.max(1, bySend.size() / 10);
            result.put("firstTenthP50Ms", Load.round(median(bySend.subList(0, Math.min(tenth, bySend.size()))) / 1000.0, 1))
                    .put("lastTenthP50Ms", Load.round(median(bySend.subList(Math.max(0, bySend.size() - tenth),
                            bySend.size())) / 1000.0, 1));
            result.put("coupons", count).put("expected", expected).put("waitedAfterLastCallbackSeconds",
                            Load.round(waited, 1))
                    .put("p50Ms", Load.round(latency.getValueAtPercentile(50) / 1000.0, 1))
                    .put("p90Ms", Load.round(latency.getValueAtPercentile(90) / 1000.0, 1))
                    .put("p99Ms", Load.round(latency.getValueAtPercentile(99) / 1000.0, 1))
                    .put("maxMs", Load.round(latency.getMaxValue() / 1000.0, 1));
            // how fast the grants went while the callbacks came in: below the send rate, a queue grew
            double span = grantSpanSeconds(db, user);
            result.put("grantsPerSecond", Load.round(grantsPerSecond(count, span), 1));
            result.put("stages", stages(db, user));
            Progress.done(String.format("callback → coupon at %.1f/s: %d of %d coupons, p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                    rate, count, expected, result.getDouble("p50Ms"), result.getDouble("p99Ms"),
                    result.getDouble("maxMs")));
            Progress.done("  stages (p50 / p99 ms): " + result.getJsonObject("stages").encode());
        } finally {
            proc.close();
        }
        Files.writeString(Path.of(args.get("out")), result.encodePrettily());
    }

    /**
     * Polls until {@code user} has {@code expected} coupons, for {@code BENCH_COUPON_WAIT} at most
     * or until the service died; answers how many it has.
     */
    private static long awaitCoupons(Settings settings, Connection db, Proc proc, String user, long expected,
                                     String since) throws SQLException, InterruptedException {
        long start = System.nanoTime();
        long deadline = start + (long) (settings.couponWait() * 1e9);
        long count = 0;
        while (System.nanoTime() < deadline && proc.alive()) {
            count = countCoupons(db, user);
            Progress.line(String.format("coupons %d / %d  %.1fs %s", count, expected,
                    (System.nanoTime() - start) / 1e9, since));
            if (count >= expected) {
                break;
            }
            Thread.sleep(200);
        }
        return count;
    }

    /**
     * The callback path of this service process, warmed before its latency is timed: the HTTP
     * part warmed another process, and this one has only granted coupons so far. Rounds of order
     * submits and their callbacks until the JIT is quiet, as the HTTP part's warm-up; then the
     * coupons of those orders, so that no backlog of the warm-up is left to the measured phase.
     */
    private static int warmCallbacks(Settings settings, Load load, Ops ops, Connection db, Proc proc, String user,
                                     double rate) throws Exception {
        Ops.Pool pool = new Ops.Pool(user);
        double warm = settings.warmupSeconds();
        Progress.say("callback → coupon: warm-up of the callback path, until the JIT is quiet");
        // the callbacks go out as the measured ones will, an open loop at the phase's rate: this
        // process is new, and its own JIT would otherwise compile the open loop during the measurement
        int rounds = Warmup.untilJitQuiet("callback → coupon warm-up", round -> Math.max(
                load.closed("warm-up orders", 16, warm, ops.createOrders(pool, -1)).jit(),
                load.open("warm-up callbacks", rate, warm, 512, ops.firstDeliveries(pool, null)).jit()));
        long coupons = awaitCoupons(settings, db, proc, user, pool.paid, "after the warm-up's last callback");
        Progress.done(String.format("callback → coupon warm-up: %d rounds, %d of %d coupons", rounds, coupons,
                pool.paid));
        return rounds;
    }

    /**
     * Where the time goes, from the service's own timestamps: the outbox row is written by the
     * callback's transaction, marked published by the relay once the broker acknowledged the batch
     * (so a coupon can be granted before that mark), and the coupon carries its grant time.
     */
    private static JsonObject stages(Connection db, String user) throws SQLException {
        JsonObject stages = new JsonObject();
        try (PreparedStatement q = db.prepareStatement("""
                SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM o.published_at - o.created_at)),
                       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM o.published_at - o.created_at)),
                       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM c.granted_at - o.created_at)),
                       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM c.granted_at - o.created_at)),
                       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM c.granted_at - o.published_at)),
                       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM c.granted_at - o.published_at))
                FROM coupons c JOIN outbox_event o ON o.topic = 'coupon-grants' AND o.event_key = c.source_key
                WHERE c.user_id = ?""")) {
            q.setString(1, user);
            try (ResultSet rs = q.executeQuery()) {
                if (rs.next()) {
                    String[] names = {"outboxWrittenToPublishedMarked", "outboxWrittenToCouponGranted",
                        "publishedMarkedToCouponGranted"};
                    for (int i = 0; i < names.length; i++) {
                        stages.put(names[i], new JsonObject()
                                .put("p50Ms", Load.round(rs.getDouble(2 * i + 1) * 1000, 1))
                                .put("p99Ms", Load.round(rs.getDouble(2 * i + 2) * 1000, 1)));
                    }
                }
            }
        }
        return stages;
    }

    private static double median(List<long[]> samples) {
        if (samples.isEmpty()) {
            return 0;
        }
        long[] values = samples.stream().mapToLong(x -> x[1]).sorted().toArray();
        return values[values.length / 2];
    }

    private static long micros(Instant instant) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, instant);
    }

    private static long countCoupons(Connection db, String user) throws SQLException {
        try (PreparedStatement q = db.prepareStatement("SELECT count(*) FROM coupons WHERE user_id = ?")) {
            q.setString(1, user);
            try (ResultSet rs = q.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Seconds from {@code user}'s first coupon to its last: the span its grants took. */
    private static double grantSpanSeconds(Connection db, String user) throws SQLException {
        try (PreparedStatement q = db.prepareStatement("""
                SELECT extract(epoch FROM max(granted_at) - min(granted_at)) FROM coupons WHERE user_id = ?""")) {
            q.setString(1, user);
            try (ResultSet rs = q.executeQuery()) {
                rs.next();
                return rs.getDouble(1);
            }
        }
    }

    /** {@code count} coupons granted over {@code span} seconds: the gaps between them, not the coupons. */
    private static double grantsPerSecond(long count, double span) {
        return span > 0 ? (count - 1) / span : 0;
    }

    private static KafkaProducer<String, String> producer(Settings settings) {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.kafka());
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        config.put(ProducerConfig.BATCH_SIZE_CONFIG, 128 * 1024);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.CLIENT_ID_CONFIG, "idem-bench");
        return new KafkaProducer<>(config);
    }
}
