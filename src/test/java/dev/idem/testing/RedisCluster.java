package dev.idem.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;

/**
 * The tests' Redis Cluster, as {@code ./idem services redis-cluster} runs it: three masters and a
 * replica each on 127.0.0.1:7001-7006, every node with its own redis.conf and pid file in
 * {@code ~/.cache/idem/redis-cluster/<port>/} ({@code IDEM_CLUSTER_STATE} moves it). Operated as an operator would: redis-cli, signals.
 */
public final class RedisCluster {

    public static final List<Integer> PORTS = List.of(7001, 7002, 7003, 7004, 7005, 7006);
    /** Where {@code ./idem services redis-cluster} keeps the nodes: the machine's, not a checkout's. */
    private static final Path DIR = Path.of(Optional.ofNullable(System.getenv("IDEM_CLUSTER_STATE"))
            .orElse(System.getProperty("user.home") + "/.cache/idem"), "redis-cluster");

    private RedisCluster() {}

    /** {@code quarkus.redis.hosts} for a client of the cluster. */
    public static String hosts() {
        return PORTS.stream().map(port -> "redis://127.0.0.1:" + port).collect(Collectors.joining(","));
    }

    /** The ports of the masters that serve slots now. */
    public static List<Integer> masters() {
        List<Integer> masters = new ArrayList<>();
        int up = PORTS.stream().filter(RedisCluster::answers).findFirst().orElseThrow(
                () -> new IllegalStateException("no node of the cluster answers"));
        for (String line : cli(up, "cluster", "nodes").split("\n")) {
            String[] fields = line.trim().split(" ");
            if (fields.length > 8 && fields[2].contains("master") && !fields[2].contains("fail")) {
                masters.add(Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1, fields[1].indexOf('@'))));
            }
        }
        return masters;
    }

    /** Every node up, answering {@code cluster_state:ok}, and three masters serve the slots. */
    public static boolean healthy() {
        return PORTS.stream().allMatch(RedisCluster::answers) && serving();
    }

    /** The nodes that are up say {@code cluster_state:ok} and three masters serve the slots: a failover is over. */
    public static boolean serving() {
        try {
            for (int port : PORTS) {
                if (answers(port) && !cli(port, "cluster", "info").contains("cluster_state:ok")) {
                    return false;
                }
            }
            return masters().size() == 3;
        } catch (IllegalStateException down) {
            return false;
        }
    }

    private static boolean answers(int port) {
        try {
            return cli(port, "ping").trim().equals("PONG");
        } catch (IllegalStateException down) {
            return false;
        }
    }

    public static void awaitHealthy(Duration within) {
        Awaitility.await().atMost(within).pollInterval(Duration.ofMillis(250)).until(RedisCluster::healthy);
    }

    /** SIGKILL, as a crash: the node's replica is promoted after the cluster's node timeout (2 s). */
    public static void kill(int port) {
        run("kill", "-KILL", pid(port));
    }

    /** Starts a node again on its own state; it rejoins, a killed master as the replica of its successor. */
    public static void start(int port) {
        run("redis-server", DIR.resolve(port + "/redis.conf").toString());
    }

    /** Every node that does not answer PING started again. */
    public static void startWhatIsDown() {
        PORTS.stream().filter(port -> !answers(port)).forEach(RedisCluster::start);
    }

    /** {@code GET key} on the node that serves it ({@code -c} follows the redirection). */
    public static String get(String key) {
        return cli(PORTS.get(0), "-c", "get", key).trim();
    }

    private static String pid(int port) {
        try {
            return Files.readString(DIR.resolve(port + "/redis.pid"), StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            throw new IllegalStateException("redis cluster node " + port + " has no pid file; ./idem test starts the cluster", e);
        }
    }

    private static String cli(int port, String... args) {
        List<String> command = new ArrayList<>(List.of("redis-cli", "-h", "127.0.0.1", "-p", Integer.toString(port)));
        command.addAll(List.of(args));
        return run(command.toArray(String[]::new));
    }

    private static String run(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 0 || out.startsWith("Could not connect")) {
                throw new IllegalStateException(String.join(" ", command) + ": " + out);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException(String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
