package dev.idem.extension.it;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.kafka.IdempotentConsumer;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

/** {@code voucher-grants}: each code is issued once, however often Kafka delivers its record. */
@ApplicationScoped
public class VoucherGrantConsumer {

    private final IdempotentConsumer consumer;
    private final Vouchers vouchers;

    VoucherGrantConsumer(IdempotentConsumer consumer, Vouchers vouchers) {
        this.consumer = consumer;
        this.vouchers = vouchers;
    }

    @Incoming("voucher-grants")
    public Uni<Void> grant(Message<byte[]> record) {
        return consumer.consume(record, "voucher-grant", VoucherIssue.class, VoucherIssue::code,
                (issue, tx) -> vouchers.issue(tx, issue).replaceWith(Effect.processed()));
    }
}
