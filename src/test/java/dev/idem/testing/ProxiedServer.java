package dev.idem.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/** Points the service at one real server through a {@link TcpProxy} that the test then controls. */
abstract class ProxiedServer implements QuarkusTestResourceLifecycleManager {

    private final int target;
    private TcpProxy proxy;

    ProxiedServer(int target) {
        this.target = target;
    }

    /** The service's configuration for a server on {@code port}. */
    abstract Map<String, String> pointedAt(int port);

    /** Hands the proxy to the test's static accessor. */
    abstract void publish(TcpProxy proxy);

    @Override
    public Map<String, String> start() {
        try {
            proxy = new TcpProxy(target);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        publish(proxy);
        return pointedAt(proxy.port());
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
