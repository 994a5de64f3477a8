package dev.idem.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The fault suite's TCP relay between the instances and one server, JDK only:
 * {@code proxy --listen PORT --to PORT --mode FILE}. Every 50 ms it reads one word from FILE:
 * {@code pass}, {@code delay <ms>} (every chunk either way waits that long) or {@code blackhole}
 * (nothing goes through, nothing is refused or reset, until the mode changes back).
 */
final class FaultProxy {

    private static volatile long delayMs;
    private static volatile boolean held;

    private FaultProxy() {}

    static void run(Args args) throws IOException, InterruptedException {
        Path modeFile = Path.of(args.get("mode"));
        Files.writeString(modeFile, "pass\n");
        int target = args.integer("to");
        ServerSocket server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), args.integer("listen")), 512);
        start(() -> {
            while (true) {
                try {
                    Socket client = server.accept();
                    start(() -> relay(client, target));
                } catch (IOException e) {
                    return;
                }
            }
        });
        for (String mode = "pass"; ; Thread.sleep(50)) {
            String read;
            try {
                read = Files.readString(modeFile).trim();
            } catch (IOException unreadable) {
                continue; // the last mode holds
            }
            if (!read.isEmpty() && !read.equals(mode)) {
                System.out.println("proxy: " + read);
                mode = read;
                held = mode.equals("blackhole");
                delayMs = mode.matches("delay \\d+") ? Long.parseLong(mode.substring(6)) : 0;
            }
        }
    }

    private static void relay(Socket client, int target) {
        try {
            Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
            upstream.setTcpNoDelay(true);
            client.setTcpNoDelay(true);
            start(() -> pump(upstream, client));
            pump(client, upstream);
        } catch (IOException refused) {
            close(client);
        }
    }

    /** One direction until either side closes, then both closed. */
    private static void pump(Socket from, Socket to) {
        byte[] chunk = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            for (int n; (n = in.read(chunk)) != -1; ) {
                while (held) {
                    Thread.sleep(20);
                }
                if (delayMs > 0) {
                    Thread.sleep(delayMs);
                }
                out.write(chunk, 0, n);
            }
        } catch (IOException | InterruptedException closed) {
            // one side went away
        } finally {
            close(from);
            close(to);
        }
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already gone
        }
    }

    private static void start(Runnable task) {
        Thread thread = new Thread(task);
        thread.setDaemon(true);
        thread.start();
    }
}
