package dev.idem.pipeline;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay on loopback to a server's port that counts the reads it makes of what clients send:
 * one write of a client on loopback arrives as one read, so the count shows how many writes a
 * client made.
 */
final class CountingRelay implements AutoCloseable {

    private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicLong reads = new AtomicLong();
    private final int target;

    CountingRelay(int target) throws IOException {
        this.target = target;
        daemon(this::accept);
    }

    int port() {
        return server.getLocalPort();
    }

    /** The reads made so far of what the clients sent. */
    long reads() {
        return reads.get();
    }

    private void accept() {
        try {
            while (true) {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                daemon(() -> pump(client, upstream, reads));
                daemon(() -> pump(upstream, client, new AtomicLong()));
            }
        } catch (IOException closed) {
            // the relay closed
        }
    }

    private static void daemon(Runnable task) {
        Thread thread = new Thread(task, "counting-relay");
        thread.setDaemon(true);
        thread.start();
    }

    private static void pump(Socket from, Socket to, AtomicLong counted) {
        byte[] buffer = new byte[1 << 16];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                counted.incrementAndGet();
                out.write(buffer, 0, n);
            }
        } catch (IOException closed) {
            // either side closed
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket socket : sockets) {
            socket.close();
        }
    }
}
