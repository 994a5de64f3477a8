package dev.idem.bench;

import java.util.Arrays;

/**
 * The load generator behind {@code scripts/bench.sh} and {@code scripts/chaos.sh}. Each command
 * measures one part against a service the script started and writes its figures as JSON:
 * <pre>
 *   http    --url U --pid PID --run RUN --out F ...        the HTTP figures ({@link HttpPhases})
 *   compare --a-url U ... --b-url U ...                    two services' HTTP figures side by side
 *   kafka   --port P --pid PID --run RUN --variant pipeline|bare [--grants N] --out F
 *                                                          coupon grants/s through Kafka
 *   latency --port P --pid PID --run RUN --rate R --out F  callback → coupon latency at a fixed rate
 *   report  --dir D --out F --latest F --table F           merges the parts, prints the table
 *   chaos, proxy, issuer                                   the fault suite ({@link Chaos})
 * </pre>
 * Settings come from BENCH_* environment variables ({@link Settings}).
 */
public final class Bench {

    private Bench() {}

    public static void main(String[] argv) throws Exception {
        if (argv.length == 0) {
            System.err.println("usage: bench http|compare|kafka|latency|report|chaos|proxy|issuer [--option value]...");
            System.exit(2);
        }
        Args args = Args.parse(Arrays.copyOfRange(argv, 1, argv.length));
        Settings settings = Settings.fromEnv();
        switch (argv[0]) {
            case "http" -> HttpPhases.run(settings, args);
            case "compare" -> HttpPhases.compare(settings, args);
            case "kafka" -> KafkaPhases.grants(settings, args);
            case "latency" -> KafkaPhases.latency(settings, args);
            case "chaos" -> Chaos.run(settings, args);
            case "proxy" -> FaultProxy.run(args);
            case "issuer" -> Issuer.run(args);
            case "report" -> Report.run(args);
            default -> {
                System.err.println("bench: unknown command " + argv[0]);
                System.exit(2);
            }
        }
        System.exit(0);
    }
}
