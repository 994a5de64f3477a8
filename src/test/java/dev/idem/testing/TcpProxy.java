package dev.idem.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP relay in front of a real server, so that server can be made unreachable for the
 * service alone (connections reset, new ones refused), slow (every chunk delayed) or silent (a
 * blackhole: nothing passes, nothing is reset, until it is restored). The fault suite's relay,
 * a process of its own, is the bench's {@code FaultProxy}.
 */
public final class TcpProxy implements AutoCloseable {

    private static final int BACKLOG = 512;

    private final int targetPort;
    private final int port;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket server;
    private volatile long delayMs;
    private volatile boolean held;

    /** A relay on a free port to {@code targetPort}. */
    public TcpProxy(int targetPort) throws IOException {
        this(0, targetPort);
    }

    /** A relay on {@code port} (0: a free one) to {@code targetPort}, both on loopback. */
    public TcpProxy(int port, int targetPort) throws IOException {
        this.targetPort = targetPort;
        ServerSocket first = listen(port);
        this.port = first.getLocalPort();
        accept(first);
    }

    public int port() {
        return port;
    }

    /** Resets every open connection and refuses new ones until {@link #restore()}. */
    public synchronized void cut() throws IOException {
        if (server != null) {
            server.close();
            server = null;
        }
        for (Socket socket : sockets) {
            reset(socket);
        }
        sockets.clear();
    }

    /** Every chunk, either way, waits {@code delay} before it goes on: the server answers that much later. */
    public void slow(Duration delay) {
        delayMs = delay.toMillis();
    }

    /**
     * Nothing goes through and nothing is reset or refused, as when packets are dropped:
     * connections stay open and silent, new ones are not accepted.
     */
    public void blackhole() {
        held = true;
    }

    /** Back to normal: what a blackhole held goes on, as TCP's retransmissions would deliver it. */
    public synchronized void restore() throws IOException {
        held = false;
        delayMs = 0;
        if (server == null) {
            accept(listen(port));
        }
    }

    @Override
    public void close() throws IOException {
        cut();
    }

    private static ServerSocket listen(int port) throws IOException {
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), BACKLOG);
        return socket;
    }

    private void accept(ServerSocket listening) {
        server = listening;
        start("tcp-proxy-accept-" + port, () -> {
            while (!listening.isClosed()) {
                try {
                    waitWhileHeld();
                    Socket client = listening.accept();
                    sockets.add(client);
                    start("tcp-proxy-to-" + targetPort, () -> relay(client));
                } catch (IOException closed) {
                    // the listening socket was closed by cut()
                }
            }
        });
    }

    /** Connects to the target off the accepting thread, then pumps both ways. */
    private void relay(Socket client) {
        Socket upstream;
        try {
            upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
            upstream.setTcpNoDelay(true);
            client.setTcpNoDelay(true);
        } catch (IOException refused) {
            sockets.remove(client);
            reset(client);
            return;
        }
        sockets.add(upstream);
        start("tcp-proxy-from-" + targetPort, () -> pump(upstream, client));
        pump(client, upstream);
    }

    /** One direction until either side closes; then both are closed, as the other direction ends too. */
    private void pump(Socket from, Socket to) {
        byte[] chunk = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            for (int n; (n = in.read(chunk)) != -1; ) {
                waitWhileHeld();
                long delay = delayMs;
                if (delay > 0) {
                    Thread.sleep(delay);
                }
                out.write(chunk, 0, n);
                out.flush();
            }
        } catch (IOException closed) {
            // one side went away: close both below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            close(from);
            close(to);
            sockets.remove(from);
            sockets.remove(to);
        }
    }

    private void waitWhileHeld() {
        while (held) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void start(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Closes with a reset (RST), as a server that went away does. */
    private static void reset(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
        } catch (IOException alreadyClosed) {
            // nothing to reset
        }
        close(socket);
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        } catch (IOException alreadyClosed) {
            // closing what is already gone
        }
    }
}
