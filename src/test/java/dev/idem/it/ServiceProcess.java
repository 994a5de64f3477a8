package dev.idem.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * One instance of the packaged service, run as an operator runs it: the artifact under test (the
 * native executable after {@code -Dnative}, else {@code java -jar}) on its own loopback port, its
 * output in {@code target/it-logs/<name>.log}. It can be killed outright and started again on the
 * same port; {@link #stopAll} never leaves a process behind.
 */
final class ServiceProcess {

    /** The tests' own database (./idem test makes it afresh), never the one ./idem run serves. */
    static final String DATABASE = "postgresql://127.0.0.1:5432/idem_test";

    private static final Path BASEDIR = Path.of(System.getProperty("basedir", "."));
    private static final Path JAR = BASEDIR.resolve("target/quarkus-app/quarkus-run.jar");
    /** What the last build made, as Quarkus records it for its own {@code @QuarkusIntegrationTest}s. */
    private static final Path ARTIFACT = BASEDIR.resolve("target/quarkus-artifact.properties");
    /** The build does not change under a test run: read once. */
    private static final List<String> COMMAND = command();
    private static final Path LOGS = BASEDIR.resolve("target/it-logs");
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();

    final String name;
    final int port;
    private final Map<String, String> env;
    private Process process;
    private int starts;

    private ServiceProcess(String name, int port, Map<String, String> env) {
        this.name = name;
        this.port = port;
        this.env = env;
        // the last resort, should the test JVM itself be told to stop before @AfterAll runs
        Runtime.getRuntime().addShutdownHook(new Thread(this::kill, "stop-" + name));
    }

    /** Starts the packaged jar on a free loopback port with {@code env} on top of this JVM's environment. */
    static ServiceProcess start(String name, Map<String, String> env) {
        ServiceProcess service = new ServiceProcess(name, freePort(), env);
        service.launch();
        return service;
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    long pid() {
        return process.pid();
    }

    /** Polls the readiness endpoint until it answers 200; fails early, with the log's tail, if the process died. */
    ServiceProcess awaitReady(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new AssertionError(name + " exited with " + process.exitValue()
                        + " before it was ready:\n" + logTail());
            }
            if (readyStatus() == 200) {
                return this;
            }
            sleep(250);
        }
        throw new AssertionError(name + " not ready within " + timeout + ":\n" + logTail());
    }

    /**
     * Polls the readiness endpoint until the process exits, failing if it ever answered 200 or was
     * still running after {@code timeout}: the exit code of a start that must fail.
     */
    int awaitExitNeverReady(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                return process.exitValue();
            }
            if (readyStatus() == 200) {
                throw new AssertionError(name + " answered ready:\n" + logTail());
            }
            sleep(50);
        }
        throw new AssertionError(name + " still running after " + timeout + ":\n" + logTail());
    }

    /** SIGKILL to the process itself: no shutdown hook, no graceful close, no offset commit. */
    void kill() {
        if (process == null || !process.isAlive()) {
            return;
        }
        process.destroyForcibly();
        awaitExit(Duration.ofSeconds(30));
    }

    /**
     * SIGTERM, as an orchestrator stops a pod: how long the process took to exit, or nothing when
     * it was still running after {@code grace} and had to be killed, as the orchestrator would.
     */
    Optional<Duration> stop(Duration grace) {
        long started = System.nanoTime();
        process.destroy();
        if (!awaitExit(grace)) {
            kill();
            return Optional.empty();
        }
        return Optional.of(Duration.ofNanos(System.nanoTime() - started));
    }

    /** Starts it again on the same port, after a kill or a stop; the log goes to a new file. */
    ServiceProcess restart() {
        kill();
        launch();
        return this;
    }

    /**
     * SIGTERM to every one still running, then SIGKILL to those that did not exit in time; fails
     * if any is still alive afterwards. Null entries (never started) are skipped.
     */
    static void stopAll(ServiceProcess... services) {
        List<ServiceProcess> running = Arrays.stream(services).filter(s -> s != null && s.isAlive()).toList();
        running.forEach(s -> s.process.destroy());
        running.forEach(s -> {
            if (!s.awaitExit(Duration.ofSeconds(20))) {
                s.kill();
            }
        });
        List<String> left = running.stream().filter(ServiceProcess::isAlive).map(s -> s.name).toList();
        if (!left.isEmpty()) {
            throw new IllegalStateException("still running: " + left);
        }
    }

    boolean isAlive() {
        return process != null && process.isAlive();
    }

    Path log() {
        return LOGS.resolve(starts == 1 ? name + ".log" : name + "-run" + starts + ".log");
    }

    private void launch() {
        starts++;
        try {
            Files.createDirectories(LOGS);
            ProcessBuilder builder = new ProcessBuilder(COMMAND)
                    .directory(BASEDIR.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.to(log().toFile()));
            builder.environment().putAll(env);
            builder.environment().put("QUARKUS_HTTP_HOST", "127.0.0.1");
            builder.environment().put("QUARKUS_HTTP_PORT", Integer.toString(port));
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start " + name, e);
        }
    }

    private boolean awaitExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private int readyStatus() {
        HttpRequest request = HttpRequest.newBuilder(uri("/q/health/ready")).timeout(Duration.ofSeconds(2)).build();
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    String logTail() {
        try {
            List<String> lines = Files.readAllLines(log(), StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** The command that runs the artifact under test: the one Quarkus's own launcher would pick. */
    private static List<String> command() {
        Properties artifact = new Properties();
        if (Files.exists(ARTIFACT)) {
            try (var in = Files.newInputStream(ARTIFACT)) {
                artifact.load(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        if ("native".equals(artifact.getProperty("type"))) {
            Path executable = Path.of(System.getProperty("native.image.path",
                    BASEDIR.resolve("target").resolve(artifact.getProperty("path")).toString()));
            return List.of(executable.toString());
        }
        return List.of(java(), "-jar", JAR.toString());
    }

    /** Whether the instances are the native executable, for the tests' reports. */
    static boolean isNative() {
        return COMMAND.size() == 1;
    }

    private static String java() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
