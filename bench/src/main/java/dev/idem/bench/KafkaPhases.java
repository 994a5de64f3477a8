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
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Coupon grants through Kafka, and the whole way from a paid callback to its coupon. Coupons are
 * counted in Postgres by user id (indexed), never by scanning source keys.
 */
final class KafkaPhases {

    private static final String TOPIC = "coupon-grants";
    private static final String GROUP = "idem-coupon-grants";

    private KafkaPhases() {}

    /**
     * Grants/s of the running service's {@code coupon-grants} consumer: waits until the group has
     * a member, warms up with batches until the JIT is quiet, then produces N grant messages as
     * fast as the broker takes them and times the coupons' {@code granted_at}, first to last.
     */
    static void grants(Settings settings, Args args) throws Exception {
        String variant = args.get("variant");
        String prefix = "bench-" + args.get("run") + "-" + variant;
        Proc proc = new Proc(args.number("pid", 0), settings.clockTicks());
        JsonObject result = new JsonObject().put("variant", variant);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.kafka(), ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 5, ProducerConfig.BATCH_SIZE_CONFIG, 128 * 1024,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
             Connection db = Db.connect(settings)) {
            awaitMember(settings);
            Progress.say("kafka (" + variant + "): warm-up with " + settings.kafkaWarmup() + " grants, until the JIT is quiet");
            result.put("warmupRounds", Warmup.untilJitQuiet("kafka (" + variant + ")", 0, round -> {
                result.put("warmup", batch(producer, db, proc, prefix + "-w" + round, settings.kafkaWarmup()));
                Db.analyze(settings);
                return result.getJsonObject("warmup").getJsonObject("cores").getDouble("serviceJit", 0.0);
            }));
            long n = args.number("grants", 0);
            if (n <= 0) {
                // about BENCH_SECONDS of work at the warm-up's pace (a warm service goes faster)
                n = Math.max(2000, Math.min(200_000,
                        Math.round(result.getJsonObject("warmup").getDouble("perSecond") * settings.seconds() * 1.5)));
            }
            Progress.say("kafka (" + variant + "): " + n + " grants pre-produced to " + TOPIC);
            proc.takeRssMaxKb();
            result.put("measured", batch(producer, db, proc, prefix, n).put("rssMaxKb", proc.takeRssMaxKb()));
        } finally {
            proc.close();
        }
        Files.writeString(Path.of(args.get("out")), result.encodePrettily());
    }

    private static JsonObject batch(KafkaProducer<String, String> producer, Connection db, Proc proc, String user, long n)
            throws Exception {
        Proc.CpuSnapshot cpu = proc.cpu();
        long start = System.nanoTime();
        for (long i = 0; i < n; i++) {
            String bizKey = user + "-" + i;
            producer.send(new ProducerRecord<>(TOPIC, bizKey,
                    "{\"bizKey\":\"" + bizKey + "\",\"userId\":\"" + user + "\",\"templateId\":\"BENCH\"}"));
        }
        producer.flush();
        double produced = (System.nanoTime() - start) / 1e9;
        long count = awaitCoupons(db, proc, user, n, 240);
        double wall = (System.nanoTime() - start) / 1e9;
        Proc.CpuUse use = proc.since(cpu);
        JsonObject result = new JsonObject().put("messages", n).put("coupons", count)
                .put("produceSeconds", Load.round(produced, 2)).put("wallSeconds", Load.round(wall, 2))
                .put("perSecond", Load.round(grantsPerSecond(db, user), 1)).put("perSecondWall", Load.round(count / wall, 1))
                .put("cores", use.toJson());
        Progress.done(String.format("grants %-28s %d of %d coupons, %.1f/s first to last (%.1f/s wall)%s  %s", user, count,
                n, result.getDouble("perSecond"), result.getDouble("perSecondWall"), count < n ? "  INCOMPLETE" : "",
                use.line()));
        return result;
    }

    /** Waits (three minutes at most) until the consumer group has a member: the service's consumer joined. */
    private static void awaitMember(Settings settings) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, settings.kafka()))) {
            long start = System.nanoTime();
            while (admin.describeConsumerGroups(List.of(GROUP)).describedGroups().get(GROUP).get(10, TimeUnit.SECONDS)
                    .members().isEmpty() && System.nanoTime() - start < 180e9) {
                Progress.line(String.format("kafka: waiting for a member of %s, %.0fs", GROUP, (System.nanoTime() - start) / 1e9));
                Thread.sleep(500);
            }
        }
    }

    /**
     * Callback → coupon: fresh orders are paid by an open loop of callbacks at {@code --rate}/s,
     * and each coupon's {@code granted_at} (the service's clock, same machine) is compared with
     * the moment its callback left the load generator.
     */
    static void latency(Settings settings, Args args) throws Exception {
        String user = "bench-" + args.get("run") + "-" + args.get("name", "lat");
        double rate = Math.max(1, Double.parseDouble(args.get("rate")));
        Proc proc = new Proc(args.number("pid", 0), settings.clockTicks());
        JsonObject result = new JsonObject().put("rate", Load.round(rate, 1)).put("why", args.get("why", ""));
        Map<String, Long> sentMicros = new ConcurrentHashMap<>();
        try (Load load = new Load("127.0.0.1", args.integer("port"), proc, 1); Connection db = Db.connect(settings)) {
            Ops ops = new Ops(settings.secret());
            // this service process is new: its callback path is warmed first, as the measured
            // callbacks go out (an open loop at the phase's rate), then the warm-up's coupons
            // awaited, so that no backlog of it is left to the measured phase
            Ops.Pool warm = new Ops.Pool(user + "-w");
            double seconds = settings.warmupSeconds();
            result.put("warmupRounds", Warmup.untilJitQuiet("callback → coupon warm-up", 0, round -> Math.max(
                    load.closed("warm-up orders", 16, seconds, ops.createOrders(warm, -1)).jit(),
                    load.open("warm-up callbacks", rate, seconds, 512, ops.firstDeliveries(warm, null)).jit())));
            awaitCoupons(db, proc, warm.user, warm.paid, 120);

            Ops.Pool pool = new Ops.Pool(user);
            int orders = (int) Math.ceil(rate * settings.seconds()) + 1;
            Progress.say("callback → coupon: " + orders + " fresh orders, then callbacks at " + Load.round(rate, 1) + "/s");
            load.closed("(new orders)", 16, 300, ops.createOrders(pool, orders));
            Load.Step step = load.open("callbacks at rate", rate, settings.seconds(), 512, ops.firstDeliveries(pool,
                    order -> sentMicros.put(order.id(), ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now()))));
            result.put("callbacks", step.toJson());
            long count = awaitCoupons(db, proc, user, step.ok, 120);
            Histogram latency = new Histogram(TimeUnit.HOURS.toMicros(1), 3);
            try (PreparedStatement q = db.prepareStatement("""
                    SELECT order_id, (extract(epoch FROM granted_at) * 1000000)::bigint FROM coupons WHERE user_id = ?""")) {
                q.setString(1, user);
                try (ResultSet rs = q.executeQuery()) {
                    while (rs.next()) {
                        Long sent = sentMicros.get(rs.getString(1));
                        if (sent != null) {
                            latency.recordValue(Math.max(1, Math.min(TimeUnit.HOURS.toMicros(1), rs.getLong(2) - sent)));
                        }
                    }
                }
            }
            result.put("coupons", count).put("expected", step.ok)
                    .put("p50Ms", Load.round(latency.getValueAtPercentile(50) / 1000.0, 1))
                    .put("p90Ms", Load.round(latency.getValueAtPercentile(90) / 1000.0, 1))
                    .put("p99Ms", Load.round(latency.getValueAtPercentile(99) / 1000.0, 1))
                    .put("maxMs", Load.round(latency.getMaxValue() / 1000.0, 1))
                    // how fast the grants went while the callbacks came in: below the send rate, a queue grew
                    .put("grantsPerSecond", Load.round(grantsPerSecond(db, user), 1));
            Progress.done(String.format("callback → coupon at %.1f/s: %d of %d coupons, p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                    rate, count, step.ok, result.getDouble("p50Ms"), result.getDouble("p99Ms"), result.getDouble("maxMs")));
        } finally {
            proc.close();
        }
        Files.writeString(Path.of(args.get("out")), result.encodePrettily());
    }

    /**
     * Polls until {@code user} has {@code expected} coupons, for {@code seconds} at most, until the
     * service died or a minute without a new one; answers how many it has.
     */
    private static long awaitCoupons(Connection db, Proc proc, String user, long expected, double seconds)
            throws SQLException, InterruptedException {
        long start = System.nanoTime();
        long count = -1;
        long changed = start;
        while (System.nanoTime() - start < seconds * 1e9 && System.nanoTime() - changed < 60e9 && proc.alive()) {
            long now = coupons(db, user)[0];
            changed = now != count ? System.nanoTime() : changed;
            count = now;
            Progress.line(String.format("coupons of %s %d / %d  %.1fs", user, count, expected, (System.nanoTime() - start) / 1e9));
            if (count >= expected) {
                break;
            }
            Thread.sleep(200);
        }
        return count;
    }

    /** {@code user}'s coupons, and the microseconds from the first one's grant to the last one's. */
    private static long[] coupons(Connection db, String user) throws SQLException {
        try (PreparedStatement q = db.prepareStatement("""
                SELECT count(*), coalesce(extract(epoch FROM max(granted_at) - min(granted_at)) * 1000000, 0)::bigint
                FROM coupons WHERE user_id = ?""")) {
            q.setString(1, user);
            try (ResultSet rs = q.executeQuery()) {
                rs.next();
                return new long[] {rs.getLong(1), rs.getLong(2)};
            }
        }
    }

    /** Coupons granted per second over the span from {@code user}'s first to its last: the gaps between them, not the coupons. */
    private static double grantsPerSecond(Connection db, String user) throws SQLException {
        long[] c = coupons(db, user);
        return c[1] > 0 ? (c[0] - 1) / (c[1] / 1e6) : 0;
    }
}
