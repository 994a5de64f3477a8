package dev.idem.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One Redis database as an operator's {@code redis-cli -n <db>} reaches it: a connection per
 * command, so the packaged instances' Redis can be flushed from outside while they serve.
 */
final class RedisDb {

    private final String host;
    private final int port;
    private final int db;

    RedisDb(String host, int port, int db) {
        this.host = host;
        this.port = port;
        this.db = db;
    }

    /** FLUSHDB: every pre-check mark and DONE result of this database is gone at once. */
    void flush() {
        String reply = command("FLUSHDB");
        if (!reply.equals("+OK")) {
            throw new IllegalStateException("FLUSHDB answered " + reply);
        }
    }

    /** DBSIZE, the number of keys in the database. */
    long size() {
        return Long.parseLong(command("DBSIZE").substring(1));
    }

    /** SELECT, then {@code name}; answers the second reply's first line (RESP simple string or integer). */
    private String command(String name) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 2_000);
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            String select = Integer.toString(db);
            out.write(("*2\r\n$6\r\nSELECT\r\n$" + select.length() + "\r\n" + select + "\r\n"
                    + "*1\r\n$" + name.length() + "\r\n" + name + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String selected = line(in);
            if (!selected.equals("+OK")) {
                throw new IllegalStateException("SELECT " + db + " answered " + selected);
            }
            return line(in);
        } catch (IOException e) {
            throw new UncheckedIOException("Redis " + host + ":" + port + " did not answer " + name, e);
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c = in.read(); c != '\r'; c = in.read()) {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            line.append((char) c);
        }
        in.read(); // '\n'
        return line.toString();
    }
}
