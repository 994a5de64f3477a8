package dev.idem.coupons;

import dev.idem.pipeline.kafka.IdempotentConsumer;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.KafkaRecordBatch;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;

/** {@code coupon-grants}: from the outbox relay or any other producer; one coupon per bizKey. */
@ApplicationScoped
public class CouponGrantConsumer {

    static final String CHANNEL = "coupon-grants";

    private final IdempotentConsumer consumer;
    private final CouponService coupons;

    CouponGrantConsumer(IdempotentConsumer consumer, CouponService coupons) {
        this.consumer = consumer;
        this.coupons = coupons;
    }

    /** A whole poll at a time: its grants share one transaction and one Redis round trip each way. */
    @Incoming(CHANNEL)
    public Uni<Void> consume(KafkaRecordBatch<String, byte[]> batch) {
        return consumer.consumeBatch(CHANNEL, batch, CouponGrant.class, CouponGrant::violation, coupons::grantAll);
    }
}
