package dev.idem.pipeline.kafka;

import io.quarkus.arc.Arc;
import io.quarkus.arc.InstanceHandle;
import io.quarkus.runtime.shutdown.ShutdownListener;
import io.smallrye.reactive.messaging.kafka.KafkaConnector;
import jakarta.enterprise.inject.Any;

/**
 * Closes the Kafka channels first when the application stops. Quarkus closes the reactive database
 * pool among its shutdown tasks, before the application scope ends and with it the connector, which
 * is when the connector would close its channels: records in hand then retried against a closed
 * pool until each consumer's commit interval ran out, and were redelivered after the restart.
 * Closed here, before any shutdown task, a consumer's last records finish and their offsets are
 * committed; the connector's own close later finds its clients closed.
 */
public class ConsumersCloseFirst implements ShutdownListener {

    @Override
    public void shutdown(ShutdownNotification notification) {
        try (InstanceHandle<KafkaConnector> connector = Arc.container().instance(KafkaConnector.class, Any.Literal.INSTANCE)) {
            if (connector.isAvailable()) {
                connector.get().terminate(null);
            }
        } finally {
            notification.done();
        }
    }
}
