package dev.idem.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * Points the service at Postgres through a {@link TcpProxy}, so a test can take the database away
 * and give it back. The test reaches the proxy through {@link #proxy()}.
 */
public class PostgresBehindProxy implements QuarkusTestResourceLifecycleManager {

    private static volatile TcpProxy proxy;

    public static TcpProxy proxy() {
        return proxy;
    }

    @Override
    public Map<String, String> start() {
        try {
            proxy = new TcpProxy(5432);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Map.of("quarkus.datasource.reactive.url", "postgresql://127.0.0.1:" + proxy.port() + "/idem_test");
    }

    @Override
    public void stop() {
        try {
            proxy.close();
        } catch (IOException ignored) {
            // best effort at shutdown
        }
    }
}
