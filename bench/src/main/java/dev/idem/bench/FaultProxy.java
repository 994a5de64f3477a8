package dev.idem.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A loopback TCP relay between the service's instances and one server of the fault suite, whose
 * behaviour a fault changes by writing one word to its mode file:
 * <ul>
 *   <li>{@code pass}: bytes go through;</li>
 *   <li>{@code delay <ms>}: every chunk either way waits that long first, so every answer comes
 *       that much later;</li>
 *   <li>{@code blackhole}: nothing goes through and nothing is refused or reset, as when packets
 *       are dropped: connections stay open and silent, new ones are not accepted; once the mode
 *       changes back, what was held goes on, as TCP's retransmissions would deliver it.</li>
 * </ul>
 * <pre>  proxy --listen PORT --to PORT --mode FILE</pre>
 */
final class FaultProxy {

    private static final long POLL_MS = 50;

    private final int target;
    private final Path modeFile;
    private volatile String mode = "pass";

    private FaultProxy(int target, Path modeFile) {
        this.target = target;
        this.modeFile = modeFile;
    }

    static void run(Args args) throws IOException {
        FaultProxy proxy = new FaultProxy(args.integer("to"), Path.of(args.get("mode")));
        Files.writeString(proxy.modeFile, "pass\n");
        Thread watcher = new Thread(proxy::watch, "mode");
        watcher.setDaemon(true);
        watcher.start();
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), args.integer("listen")), 512);
            System.out.println("proxy: 127.0.0.1:" + args.integer("listen") + " -> 127.0.0.1:" + proxy.target);
            while (true) {
                proxy.holdWhileBlackholed();
                proxy.relay(server.accept());
            }
        }
    }

    /** Reads the mode file every 50 ms; an unreadable file keeps the last mode. */
    private void watch() {
        while (true) {
            try {
                String read = Files.readString(modeFile, StandardCharsets.US_ASCII).trim();
                if (!read.isEmpty() && !read.equals(mode)) {
                    System.out.println("proxy: " + read);
                    mode = read;
                }
                Thread.sleep(POLL_MS);
            } catch (IOException unreadable) {
                sleep(POLL_MS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void relay(Socket client) {
        Thread open = new Thread(() -> {
            try {
                Socket server = new Socket(InetAddress.getLoopbackAddress(), target);
                server.setTcpNoDelay(true);
                client.setTcpNoDelay(true);
                Thread back = new Thread(() -> pump(server, client), "from-" + target);
                back.setDaemon(true);
                back.start();
                pump(client, server);
            } catch (IOException refused) {
                close(client);
            }
        }, "to-" + target);
        open.setDaemon(true);
        open.start();
    }

    /** One direction until either side closes; then both are closed, as the other direction ends too. */
    private void pump(Socket from, Socket to) {
        byte[] chunk = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            for (int n; (n = in.read(chunk)) != -1; ) {
                holdWhileBlackholed();
                long delay = delayMs();
                if (delay > 0) {
                    Thread.sleep(delay);
                }
                out.write(chunk, 0, n);
                out.flush();
            }
        } catch (IOException closed) {
            // the other side went away
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            close(from);
            close(to);
        }
    }

    private void holdWhileBlackholed() {
        while (mode.equals("blackhole")) {
            sleep(POLL_MS);
        }
    }

    private long delayMs() {
        String current = mode;
        if (current.startsWith("delay ")) {
            try {
                return Long.parseLong(current.substring("delay ".length()).trim());
            } catch (NumberFormatException unreadable) {
                return 0;
            }
        }
        return 0;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing what is already gone
        }
    }
}
