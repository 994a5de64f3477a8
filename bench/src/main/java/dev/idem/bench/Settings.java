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
        int clockTicks) {

    static Settings fromEnv() {
        return new Settings(
                dbl("BENCH_SECONDS", 10),
                dbl("BENCH_WARMUP_SECONDS", 5),
                Arrays.stream(env("BENCH_CONCURRENCY", "4 8 16 32 64").trim().split("[ ,]+"))
                        .mapToInt(Integer::parseInt).toArray(),
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
                (int) dbl("BENCH_CLK_TCK", 100));
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    private static double dbl(String name, double fallback) {
        return Double.parseDouble(env(name, Double.toString(fallback)));
    }
}
