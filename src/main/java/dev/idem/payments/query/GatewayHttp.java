package dev.idem.payments.query;

import io.smallrye.mutiny.Uni;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.URI;
import java.time.Duration;
import java.util.Map;

/**
 * The gateways' APIs over Vert.x's web client: non-blocking, on the caller's event loop, which
 * also hears the answer. A request that gets no data for {@link #TIMEOUT} fails, as does one that
 * cannot connect within {@link #CONNECT_TIMEOUT}. Redirects are not followed: a signed request
 * goes only where it was signed for.
 */
@ApplicationScoped
public class GatewayHttp {

    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    static final Duration TIMEOUT = Duration.ofSeconds(10);
    /** Requests to one gateway in flight at once, at most; the rest wait for a connection. */
    static final int CONNECTIONS = 20;

    /** An answer as received: its status, headers and body's bytes. */
    public record Answer(int status, MultiMap headers, byte[] body) {
        public String header(String name) {
            return headers.get(name);
        }
    }

    private final WebClient client;

    GatewayHttp(Vertx vertx) {
        this.client = WebClient.create(vertx, new WebClientOptions()
                .setConnectTimeout((int) CONNECT_TIMEOUT.toMillis())
                .setMaxPoolSize(CONNECTIONS)
                .setFollowRedirects(false)
                .setUserAgent("idem"));
    }

    /** {@code body} null: none. Fails on a transport error or a timeout. */
    public Uni<Answer> send(HttpMethod method, URI url, Map<String, String> headers, byte[] body) {
        return Uni.createFrom().completionStage(() -> {
            HttpRequest<Buffer> request = client.requestAbs(method, url.toString()).timeout(TIMEOUT.toMillis());
            headers.forEach(request::putHeader);
            return (body == null ? request.send() : request.sendBuffer(Buffer.buffer(body))).toCompletionStage();
        }).map(response -> new Answer(response.statusCode(), response.headers(),
                response.body() == null ? new byte[0] : response.body().getBytes()));
    }

    @PreDestroy
    void close() {
        client.close();
    }
}
