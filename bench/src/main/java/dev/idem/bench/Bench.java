package dev.idem.bench;

import java.util.Arrays;

/**
 * The load generator behind {@code scripts/bench.sh}. Each sub-command measures one part of the
 * benchmark against a service the script started, and writes its figures as JSON:
 *
 * <pre>
 *   http    --port P --pid PID --run RUN --out F      warm-up, Idempotency-Key first/replay,
 *                                                      first-delivery and duplicate callbacks,
 *                                                      the bare one-Redis-GET endpoint (ramps)
 *   kafka   --port P --pid PID --run RUN --variant pipeline|bare [--grants N] --out F
 *                                                      coupon grants/s through Kafka
 *   latency --port P --pid PID --run RUN --rate R --out F
 *                                                      callback → coupon latency at a fixed rate
 *   compare --name N --url U --pid PID --kinds K --run RUN --started bench|no --out F ...
 *                                                      one service of the comparison with idem
 *                                                      ({@link Compare})
 *   profile --dir D --interval-ms MS                   cuts the service's CPU profile of the
 *                                                      HTTP part by step ({@link Profile})
 *   report  --dir D --out F --latest F --table F       merges the parts, prints the table
 *   chaos   --fault NAME --ports P1,P2 --run RUN ...   one run of the fault suite ({@link Chaos})
 * </pre>
 *
 * Settings come from BENCH_* environment variables (see {@link Settings}).
 */
public final class Bench {

    private Bench() {}

    public static void main(String[] argv) throws Exception {
        if (argv.length == 0) {
            System.err.println("usage: bench http|kafka|latency|compare|profile|report|chaos|proxy|issuer [--option value]...");
            System.exit(2);
        }
        Args args = Args.parse(Arrays.copyOfRange(argv, 1, argv.length));
        Settings settings = Settings.fromEnv();
        switch (argv[0]) {
            case "http" -> HttpPhases.run(settings, args);
            case "kafka" -> KafkaPhases.grants(settings, args);
            case "latency" -> KafkaPhases.latency(settings, args);
            case "compare" -> Compare.run(settings, args);
            case "chaos" -> Chaos.run(settings, args);
            case "proxy" -> FaultProxy.run(args);
            case "issuer" -> Issuer.run(args);
            case "profile" -> Profile.run(args);
            case "report" -> Report.run(args);
            default -> {
                System.err.println("bench: unknown command " + argv[0]);
                System.exit(2);
            }
        }
        System.exit(0);
    }
}
