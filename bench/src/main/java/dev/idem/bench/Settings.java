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
        int kafkaWarmup,
        int clockTicks,
        int[] peerConcurrency,
        double peerWarmup,
        int peerRounds,
        int loadLoops,
        double endToEndSeconds,
        int endToEndConcurrency,
        double endToEndDrainSeconds) {

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
                (int) dbl("BENCH_KAFKA_WARMUP", 100000),
                (int) dbl("BENCH_CLK_TCK", 100),
                ints("BENCH_PEER_CONCURRENCY", "8 32 128"),
                dbl("BENCH_PEER_WARMUP", 120),
                (int) dbl("BENCH_PEER_ROUNDS", 3),
                (int) dbl("BENCH_LOAD_LOOPS", 1),
                dbl("BENCH_E2E_SECONDS", 20),
                (int) dbl("BENCH_E2E_CONCURRENCY", 32),
                dbl("BENCH_E2E_DRAIN_SECONDS", 60));
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
