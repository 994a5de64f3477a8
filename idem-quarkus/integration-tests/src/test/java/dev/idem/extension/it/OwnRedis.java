package dev.idem.extension.it;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A Redis of the test's own (Debian's redis-server, on a free port, keeping nothing on disk), which
 * the test stops and starts again while the application runs: the shared one on 6379 stays up for
 * every other test.
 */
public class OwnRedis implements QuarkusTestResourceLifecycleManager {

    private static int port;
    private static Process server;

    @Override
    public Map<String, String> start() {
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        up();
        return Map.of("quarkus.redis.hosts", "redis://127.0.0.1:" + port);
    }

    @Override
    public void stop() {
        down();
    }

    /** Starts redis-server on the port and waits until it accepts connections. */
    static synchronized void up() {
        try {
            server = new ProcessBuilder(List.of("redis-server", "--bind", "127.0.0.1", "--port", Integer.toString(port),
                    "--save", "", "--appendonly", "no"))
                    .redirectErrorStream(true).redirectOutput(new File("target/own-redis.log"))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("redis-server (Debian's redis-server package) could not be started", e);
        }
        Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
        while (Instant.now().isBefore(deadline)) {
            try (Socket ignored = new Socket("127.0.0.1", port)) {
                return;
            } catch (IOException notYet) {
                sleep();
            }
        }
        throw new IllegalStateException("redis-server did not open 127.0.0.1:" + port + " (see target/own-redis.log)");
    }

    /** Kills the server, as a crash would. */
    static synchronized void down() {
        if (server != null) {
            server.destroyForcibly();
            try {
                server.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            server = null;
        }
    }

    private static void sleep() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
