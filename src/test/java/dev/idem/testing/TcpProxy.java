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
 * A loopback TCP relay in front of a real server, so a test can make that server unreachable
 * for the service (connections reset, new ones refused), slow (every chunk delayed) or silent
 * (a blackhole: nothing passes, nothing is reset, until it is restored) without touching it for
 * anyone else.
 */
public final class TcpProxy implements AutoCloseable {

    private final int targetPort;
    private final int port;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket server;
    private volatile long delayMs;
    private volatile boolean held;

    public TcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        ServerSocket first = listen(0);
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
            closeQuietly(socket);
        }
        sockets.clear();
    }

    /** Every chunk, either way, waits {@code delay} before it goes on: the server answers that much later. */
    public void slow(Duration delay) {
        delayMs = delay.toMillis();
    }

    /** Nothing goes through and nothing is reset or refused, as when packets are dropped. */
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
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return socket;
    }

    private void accept(ServerSocket listening) {
        server = listening;
        Thread acceptor = new Thread(() -> {
            while (!listening.isClosed()) {
                try {
                    waitWhileHeld();
                    Socket client = listening.accept();
                    Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                    sockets.add(client);
                    sockets.add(upstream);
                    pipe(client, upstream);
                    pipe(upstream, client);
                } catch (IOException closedOrRefused) {
                    // listening socket closed by cut(), or the target refused: the client sees a reset
                }
            }
        }, "tcp-proxy-accept-" + port);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void pipe(Socket from, Socket to) {
        Thread copier = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    waitWhileHeld();
                    if (delayMs > 0) {
                        Thread.sleep(delayMs);
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            } catch (IOException closed) {
                // one side went away: close both below
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "tcp-proxy-pipe-" + port);
        copier.setDaemon(true);
        copier.start();
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

    private static void closeQuietly(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
