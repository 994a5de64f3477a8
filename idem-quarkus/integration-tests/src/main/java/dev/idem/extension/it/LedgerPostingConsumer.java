package dev.idem.extension.it;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.kafka.IdempotentConsumer;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * {@code ledger-postings}: each ref is entered once, however often Kafka delivers its record. A
 * debit that would overdraw its account is refused (dead-lettered), and that refusal is its ref's
 * answer: delivered again after a top-up, it is refused again.
 */
@ApplicationScoped
public class LedgerPostingConsumer {

    private final IdempotentConsumer consumer;
    private final Ledger ledger;

    LedgerPostingConsumer(IdempotentConsumer consumer, Ledger ledger) {
        this.consumer = consumer;
        this.ledger = ledger;
    }

    @Incoming("ledger-postings")
    public Uni<Void> post(Message<byte[]> record) {
        return consumer.consume(record, "ledger-posting", LedgerPosting.class, LedgerPosting::ref,
                (posting, tx) -> ledger.enter(tx, posting.account(), posting.amount(), posting.ref())
                        .map(entered -> entered.balance() < 0
                                ? Effect.rejected("INSUFFICIENT_FUNDS", "the balance of " + posting.account()
                                        + " would be " + entered.balance())
                                : Effect.processed()));
    }
}
