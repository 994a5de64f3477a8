package dev.idem.payments;

import dev.idem.pipeline.IdemRequest;
import dev.idem.support.Ids;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.annotation.Nullable;
import java.time.Instant;
import java.util.Optional;

/**
 * A gateway's notification, the same body by REST and by Kafka. Boxed members so that a missing
 * one is told from a zero.
 */
@RegisterForReflection
public record PaymentCallback(String tradeNo, String orderId, Long amountCents, String status, @Nullable Instant paidAt) {

    public static final String SUCCESS = "SUCCESS";
    public static final String CLOSED = "CLOSED";
    private static final int MAX_ID = 128;

    public Optional<String> violation() {
        if (!Ids.valid(tradeNo, MAX_ID)) {
            return Optional.of(Ids.rule("tradeNo", MAX_ID));
        }
        if (!Ids.valid(orderId, MAX_ID)) {
            return Optional.of(Ids.rule("orderId", MAX_ID));
        }
        if (amountCents == null || amountCents < 1) {
            return Optional.of("amountCents is required and positive");
        }
        if (!SUCCESS.equals(status) && !CLOSED.equals(status)) {
            return Optional.of("status must be SUCCESS or CLOSED");
        }
        return Optional.empty();
    }

    public boolean succeeded() {
        return SUCCESS.equals(status);
    }

    /** A gateway retry repeats the same notification: the dedup key is the trade and its status. */
    public IdemRequest idemRequest(String scope) {
        return new IdemRequest(scope, tradeNo + ":" + status, IdemRequest.fingerprint(orderId, amountCents, status));
    }
}
