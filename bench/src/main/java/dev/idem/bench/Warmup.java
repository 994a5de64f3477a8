package dev.idem.bench;

/** Warm-up rounds, repeated until the service's JIT compilers are quiet. */
final class Warmup {

    /**
     * A warm-up ends when the service's JIT compilers took less than this (cores) over its last
     * round: the measured steps then time compiled code, not the compiler.
     */
    static final double QUIET_JIT_CORES = 0.05;

    /**
     * Warm-up rounds at most, whatever the JIT still does after them. The HTTP paths went quiet
     * after one to five rounds; the Kafka path had not after twelve (0.15–0.4 core left).
     */
    static final int MAX_ROUNDS = 12;

    private Warmup() {}

    /** One warm-up round, given its number (1, 2, …); answers the cores the service's JIT took during it. */
    interface Round {
        double run(int number) throws Exception;
    }

    /** Runs {@code round} until the JIT is quiet or {@link #MAX_ROUNDS} ran; answers how many rounds ran. */
    static int untilJitQuiet(String what, Round round) throws Exception {
        for (int n = 1; ; n++) {
            double jit = round.run(n);
            if (jit < QUIET_JIT_CORES || n == MAX_ROUNDS) {
                return n;
            }
            Progress.say(String.format("%s: the JIT still took %.2f cores in warm-up round %d; once more", what, jit, n));
        }
    }
}
