package dev.idem.payments;

import dev.idem.orders.PaymentGateway;
import dev.idem.pipeline.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Response;
import java.time.Duration;

/**
 * Where every gateway's notification goes once read at the edge: counted by what it turned out to
 * be, a payment applied by {@link PaymentService} like any other channel's, and the end answered
 * in the gateway's own words. "Recorded" (first delivery, duplicate, anomaly, a state idem does
 * not act on) is the one answer that stops a gateway's retries.
 */
@ApplicationScoped
public class GatewayNotices {

    /** How one gateway says each thing. */
    public interface Answers {
        Response recorded();

        Response unauthentic(String reason);

        Response unreadable(String reason);

        Response inFlight(Duration retryAfter);

        Response keyReused();

        /** Nothing recorded, e.g. {@code ORDER_NOT_FOUND}: the gateway retries. */
        Response rejected(String reason, String detail);
    }

    /**
     * The status of a rejection: 404 for an unknown order (the gateway retries while the order may
     * not be stored yet), 400 for data the database refuses, 409 otherwise.
     */
    public static int status(String reason) {
        return switch (reason) {
            case "ORDER_NOT_FOUND" -> 404;
            case Outcome.Rejected.INVALID_DATA -> 400;
            default -> 409;
        };
    }

    private final PaymentService payments;
    private final MeterRegistry registry;

    GatewayNotices(PaymentService payments, MeterRegistry registry) {
        this.payments = payments;
        this.registry = registry;
    }

    public Uni<Response> answer(String gateway, Notice notice, Answers answers) {
        Counter.builder("idem.gateway.notifications")
                .description("Gateway notifications read at the edge, by gateway and what they turned out to be")
                .tag("gateway", gateway).tag("notice", notice.name())
                .register(registry).increment();
        return notice.accept(new Notice.Cases<>() {
            public Uni<Response> payment(Notice.Payment payment) {
                return payments.apply(payment.callback(), PaymentGateway.named(gateway).orElse(null))
                        .map(outcome -> outcome.accept(outcomes(answers)));
            }

            public Uni<Response> ignored(Notice.Ignored ignored) {
                Log.debugf("%s notification acknowledged and ignored: %s", gateway, ignored.reason());
                return Uni.createFrom().item(answers.recorded());
            }

            public Uni<Response> unauthentic(Notice.Unauthentic unauthentic) {
                Log.debugf("%s notification refused: %s", gateway, unauthentic.reason());
                return Uni.createFrom().item(answers.unauthentic(unauthentic.reason()));
            }

            public Uni<Response> unreadable(Notice.Unreadable unreadable) {
                Log.debugf("%s notification refused: %s", gateway, unreadable.reason());
                return Uni.createFrom().item(answers.unreadable(unreadable.reason()));
            }
        });
    }

    private static Outcome.Cases<Response> outcomes(Answers answers) {
        return new Outcome.Cases<>() {
            public Response processed(Outcome.Processed o) {
                return answers.recorded();
            }

            public Response duplicate(Outcome.Duplicate o) {
                return answers.recorded();
            }

            public Response anomaly(Outcome.Anomaly o) {
                return answers.recorded();
            }

            public Response inFlight(Outcome.InFlight o) {
                return answers.inFlight(o.retryAfter());
            }

            public Response keyReused(Outcome.KeyReused o) {
                return answers.keyReused();
            }

            public Response rejected(Outcome.Rejected o) {
                return answers.rejected(o.reason(), o.detail());
            }
        };
    }
}
