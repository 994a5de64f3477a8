package dev.idem.extension.it;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.kafka.IdempotentConsumer;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

/** {@code failing-postings}: the ledger's work, which always throws for an account named "broken-...". */
@ApplicationScoped
public class FailingPostingConsumer {

    private final IdempotentConsumer consumer;
    private final Ledger ledger;

    FailingPostingConsumer(IdempotentConsumer consumer, Ledger ledger) {
        this.consumer = consumer;
        this.ledger = ledger;
    }

    @Incoming("failing-postings")
    public Uni<Void> post(Message<byte[]> record) {
        return consumer.consume(record, "mistake-failing", LedgerPosting.class, LedgerPosting::ref, (posting, tx) -> {
            if (posting.account().startsWith("broken-")) {
                throw new Bug.Broken("the work cannot post to " + posting.account());
            }
            return ledger.enter(tx, posting.account(), posting.amount(), posting.ref())
                    .replaceWith(Effect.processed());
        });
    }
}
