package dev.idem.bench;

import dev.idem.testing.TcpProxy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The fault suite's relay between the service's instances and one server: a {@link TcpProxy}
 * (the one the service's tests use) whose behaviour a fault changes by writing one word to its
 * mode file:
 * <ul>
 *   <li>{@code pass}: bytes go through;</li>
 *   <li>{@code delay <ms>}: every chunk either way waits that long first, so every answer comes
 *       that much later;</li>
 *   <li>{@code blackhole}: nothing goes through and nothing is refused or reset, until the mode
 *       changes back.</li>
 * </ul>
 * <pre>  proxy --listen PORT --to PORT --mode FILE</pre>
 */
final class FaultProxy {

    private static final long POLL_MS = 50;

    private FaultProxy() {}

    /** Relays until the process is stopped, reading the mode file every 50 ms. */
    static void run(Args args) throws IOException, InterruptedException {
        Path modeFile = Path.of(args.get("mode"));
        Files.writeString(modeFile, "pass\n");
        TcpProxy proxy = new TcpProxy(args.integer("listen"), args.integer("to"));
        System.out.println("proxy: 127.0.0.1:" + proxy.port() + " -> 127.0.0.1:" + args.integer("to"));
        String mode = "pass";
        while (true) {
            String read = read(modeFile);
            if (!read.isEmpty() && !read.equals(mode)) {
                System.out.println("proxy: " + read);
                mode = read;
                apply(proxy, mode);
            }
            Thread.sleep(POLL_MS);
        }
    }

    private static void apply(TcpProxy proxy, String mode) throws IOException {
        if (mode.equals("blackhole")) {
            proxy.blackhole();
            return;
        }
        proxy.restore();
        if (mode.startsWith("delay ")) {
            try {
                proxy.slow(Duration.ofMillis(Long.parseLong(mode.substring("delay ".length()).trim())));
            } catch (NumberFormatException unreadable) {
                // an unreadable delay passes bytes as they come
            }
        }
    }

    /** The file's word, or nothing when it cannot be read: the last mode holds. */
    private static String read(Path modeFile) {
        try {
            return Files.readString(modeFile, StandardCharsets.US_ASCII).trim();
        } catch (IOException unreadable) {
            return "";
        }
    }
}
