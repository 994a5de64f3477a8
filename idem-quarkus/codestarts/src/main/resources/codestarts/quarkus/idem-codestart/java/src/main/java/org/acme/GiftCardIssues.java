package org.acme;

import dev.idem.pipeline.kafka.IdempotentConsumer;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

/** One gift card per bizKey, however often Kafka delivers its record. */
@ApplicationScoped
public class GiftCardIssues {

    private final IdempotentConsumer consumer;
    private final GiftCards cards;

    GiftCardIssues(IdempotentConsumer consumer, GiftCards cards) {
        this.consumer = consumer;
        this.cards = cards;
    }

    @Incoming("gift-card-issues")
    public Uni<Void> issue(Message<byte[]> record) {
        return consumer.consume(record, "gift-card-issue", CardIssue.class, CardIssue::bizKey, cards::issue);
    }
}
