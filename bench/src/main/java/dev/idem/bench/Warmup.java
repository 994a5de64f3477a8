package dev.idem.bench;

/** Warm-up rounds, repeated until the service's JIT compilers are quiet. */
final class Warmup {

    /** A round's JIT below this (cores): the measured steps then time compiled code, not the compiler. */
    static final double QUIET_JIT_CORES = 0.05;
    /**
     * Rounds at most, whatever the JIT still does. The Kafka path goes quiet in seven to twelve
     * rounds of 100,000 grants; twelve of 20,000 left it compiling on a quarter core or more.
     */
    static final int MAX_ROUNDS = 12;

    private Warmup() {}

    /** One warm-up round, given its number (1, 2, …); answers the cores the service's JIT took during it. */
    interface Round {
        double run(int number) throws Exception;
    }

    /** Runs rounds until the JIT is quiet (or {@link #MAX_ROUNDS} ran) and {@code leastSeconds} have passed; answers how many ran. */
    static int untilJitQuiet(String what, double leastSeconds, Round round) throws Exception {
        long start = System.nanoTime();
        for (int n = 1; ; n++) {
            double jit = round.run(n);
            boolean quiet = jit < QUIET_JIT_CORES || n >= MAX_ROUNDS;
            if (quiet && (System.nanoTime() - start) / 1e9 >= leastSeconds) {
                return n;
            }
            Progress.say(String.format("%s: round %d, JIT %.2f cores%s; once more", what, n, jit,
                    quiet ? ", the least warm-up time not over" : ""));
        }
    }
}
