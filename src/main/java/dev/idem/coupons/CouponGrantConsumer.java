package dev.idem.coupons;

import dev.idem.messaging.IdempotentConsumer;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

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

    @Incoming(CHANNEL)
    public Uni<Void> consume(Message<byte[]> message) {
        return consumer.consume(CHANNEL, message, CouponGrant.class, CouponGrant::violation, coupons::grant);
    }
}
