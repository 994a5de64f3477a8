package dev.idem.examples.loyalty;

import dev.idem.pipeline.kafka.IdempotentConsumer;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

/** {@code points-awards}: each award's points are added once, however often Kafka delivers it. */
@ApplicationScoped
public class PointsAwardConsumer {

    @Inject IdempotentConsumer consumer;
    @Inject PointsService points;

    @Incoming("points-awards")
    public Uni<Void> consume(Message<byte[]> record) {
        return consumer.consume("points-awards", record, PointsAward.class, PointsAward::violation, points::award);
    }
}
