package dev.idem.testing;

import java.util.Map;

/** Points the service at Redis through a {@link TcpProxy}; the test reaches it through {@link #proxy()}. */
public class RedisBehindProxy extends ProxiedServer {

    private static volatile TcpProxy proxy;

    public RedisBehindProxy() {
        super(6379);
    }

    public static TcpProxy proxy() {
        return proxy;
    }

    @Override
    Map<String, String> pointedAt(int port) {
        return Map.of("quarkus.redis.hosts", "redis://127.0.0.1:" + port + "/3");
    }

    @Override
    void publish(TcpProxy started) {
        proxy = started;
    }
}
