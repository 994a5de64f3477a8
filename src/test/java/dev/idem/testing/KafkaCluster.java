package dev.idem.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The tests' three-broker Kafka, as {@code ./idem services kafka-cluster} runs it on
 * 127.0.0.1:29092-29094: replication factor 3, min.insync.replicas 2, each node's pid file in
 * {@code ~/.cache/idem/kafka-cluster/<n>/} ({@code IDEM_CLUSTER_STATE} moves it). A broker is
 * killed as a crash would; the launcher starts it again on its data.
 */
public final class KafkaCluster {

    public static final String BOOTSTRAP = "127.0.0.1:29092,127.0.0.1:29093,127.0.0.1:29094";
    private static final Path BASEDIR = Path.of(System.getProperty("basedir", "."));
    /** Where {@code ./idem services kafka-cluster} keeps the brokers: the machine's, not a checkout's. */
    private static final Path DIR = Path.of(Optional.ofNullable(System.getenv("IDEM_CLUSTER_STATE"))
            .orElse(System.getProperty("user.home") + "/.cache/idem"), "kafka-cluster");

    private KafkaCluster() {}

    /** SIGKILL to broker {@code node} (1, 2 or 3). */
    public static void kill(int node) {
        try {
            String pid = Files.readString(DIR.resolve(node + "/kafka.pid"),
                    StandardCharsets.US_ASCII).trim();
            run("kill", "-KILL", pid);
        } catch (IOException e) {
            throw new IllegalStateException("kafka cluster node " + node + " has no pid file; ./idem test starts the cluster", e);
        }
    }

    /** Starts what is down, on its data, and waits until every broker serves. */
    public static void startWhatIsDown() {
        run("bash", BASEDIR.resolve("scripts/services.sh").toString(), "kafka-cluster");
    }

    private static void run(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(180, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + ": " + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException(String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
