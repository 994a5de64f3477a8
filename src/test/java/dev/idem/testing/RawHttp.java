package dev.idem.testing;

import io.restassured.RestAssured;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One HTTP/1.1 exchange written byte for byte: for requests that HTTP clients refuse to send
 * (control characters in a header, a request line of any length, an unknown method).
 */
public final class RawHttp {

    /** The answer as it came: status, Content-Type (null when absent) and body. */
    public record Answer(int status, String contentType, String body) {}

    private RawHttp() {}

    /** Sends {@code head} (request line and headers, without the blank line) and {@code body}. */
    public static Answer exchange(byte[] head, byte[] body) {
        return exchange(head, ("Content-Length: " + body.length).getBytes(StandardCharsets.US_ASCII), body);
    }

    /** The same with {@code body} sent as one chunk of chunked transfer encoding, its length undeclared. */
    public static Answer exchangeChunked(byte[] head, byte[] body) {
        ByteArrayOutputStream chunked = new ByteArrayOutputStream();
        chunked.writeBytes((Integer.toHexString(body.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        chunked.writeBytes(body);
        chunked.writeBytes("\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return exchange(head, "Transfer-Encoding: chunked".getBytes(StandardCharsets.US_ASCII), chunked.toByteArray());
    }

    private static Answer exchange(byte[] head, byte[] framing, byte[] payload) {
        try (Socket socket = new Socket("localhost", RestAssured.port)) {
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            out.write(head);
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            out.write(framing);
            out.write("\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.write(payload);
            out.flush();
            return parse(readAll(socket.getInputStream()));
        } catch (IOException e) {
            throw new IllegalStateException("the exchange failed", e);
        }
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        for (int n; (n = in.read(chunk)) != -1; ) {
            all.write(chunk, 0, n);
        }
        return all.toByteArray();
    }

    private static Answer parse(byte[] raw) {
        String text = new String(raw, StandardCharsets.ISO_8859_1);
        int end = text.indexOf("\r\n\r\n");
        if (end < 0) {
            throw new IllegalStateException("no complete answer: " + text);
        }
        String[] lines = text.substring(0, end).split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        String contentType = null;
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (lines[i].substring(0, colon).equalsIgnoreCase("Content-Type")) {
                contentType = lines[i].substring(colon + 1).trim();
            }
        }
        return new Answer(status, contentType,
                new String(raw, end + 4, raw.length - end - 4, StandardCharsets.UTF_8));
    }
}
