package dev.idem.bench;

import java.util.Arrays;

/** The knobs, all from the environment so that {@code scripts/bench.sh} passes them through. */
record Settings(
        double seconds,
        double warmupSeconds,
        int[] concurrency,
        double stopGain,
        String secret,
        String jdbcUrl,
        String jdbcUser,
        String jdbcPassword,
        String kafka,
        String grantsTopic,
        String grantsGroup,
        long grants,
        int kafkaWarmup,
        double drainTimeout,
        double grantTimeout,
        double couponWait,
        int clockTicks,
        int[] peerConcurrency,
        double peerWarmupCallbacks,
        double peerWarmupKeys,
        int loadLoops,
        int loadMaxLoops) {

    static Settings fromEnv() {
        return new Settings(
                dbl("BENCH_SECONDS", 10),
                dbl("BENCH_WARMUP_SECONDS", 5),
                ints("BENCH_CONCURRENCY", "4 8 16 32 64"),
                dbl("BENCH_STOP_GAIN", 0.05),
                env("BENCH_SECRET", "bench-secret"),
                env("BENCH_JDBC_URL", "jdbc:postgresql://127.0.0.1:5432/idem"),
                env("BENCH_DB_USER", "idem"),
                env("BENCH_DB_PASSWORD", "idem"),
                env("BENCH_KAFKA", "127.0.0.1:9092"),
                "coupon-grants",
                "idem-coupon-grants",
                (long) dbl("BENCH_GRANTS", 0),
                (int) dbl("BENCH_KAFKA_WARMUP", 20000),
                dbl("BENCH_DRAIN_TIMEOUT", 180),
                dbl("BENCH_GRANT_TIMEOUT", 240),
                dbl("BENCH_COUPON_WAIT", 120),
                (int) dbl("BENCH_CLK_TCK", 100),
                ints("BENCH_PEER_CONCURRENCY", "8 32 128"),
                dbl("BENCH_PEER_WARMUP_CALLBACKS", 120),
                dbl("BENCH_PEER_WARMUP_KEYS", 30),
                (int) dbl("BENCH_LOAD_LOOPS", 1),
                (int) dbl("BENCH_LOAD_MAX_LOOPS", 4));
    }

    private static int[] ints(String name, String fallback) {
        return Arrays.stream(env(name, fallback).trim().split("[ ,]+")).mapToInt(Integer::parseInt).toArray();
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    private static double dbl(String name, double fallback) {
        return Double.parseDouble(env(name, Double.toString(fallback)));
    }
}
