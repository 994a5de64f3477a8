package dev.idem.testing;

import java.util.Map;

/**
 * Points the service at Postgres through a {@link TcpProxy}, so a test can take the database away,
 * slow it down or silence it, and give it back. The test reaches the proxy through {@link #proxy()}.
 */
public class PostgresBehindProxy extends ProxiedServer {

    private static volatile TcpProxy proxy;

    public PostgresBehindProxy() {
        super(5432);
    }

    public static TcpProxy proxy() {
        return proxy;
    }

    @Override
    Map<String, String> pointedAt(int port) {
        return Map.of("quarkus.datasource.reactive.url", "postgresql://127.0.0.1:" + port + "/idem_test");
    }

    @Override
    void publish(TcpProxy started) {
        proxy = started;
    }
}
