package dev.idem.payments;

import dev.idem.pipeline.kafka.IdempotentConsumer;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * {@code payment-callbacks}: the gateway's notification on an internal, trusted channel (no
 * signature), applied by the same service as the REST callback, so both channels share one key.
 */
@ApplicationScoped
public class PaymentCallbackConsumer {

    static final String CHANNEL = "payment-callbacks";

    private final IdempotentConsumer consumer;
    private final PaymentService payments;

    PaymentCallbackConsumer(IdempotentConsumer consumer, PaymentService payments) {
        this.consumer = consumer;
        this.payments = payments;
    }

    @Incoming(CHANNEL)
    public Uni<Void> consume(Message<byte[]> message) {
        return consumer.consume(CHANNEL, message, PaymentCallback.class, PaymentCallback::violation,
                callback -> payments.apply(callback, null));
    }
}
