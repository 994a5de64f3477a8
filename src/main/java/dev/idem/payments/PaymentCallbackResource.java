package dev.idem.payments;

import dev.idem.pipeline.Outcome;
import dev.idem.web.Json;
import dev.idem.pipeline.StrictJson;
import dev.idem.pipeline.StrictJson.Parsed;
import dev.idem.web.Problem;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * The gateway's notification. Its answer means "received and durably recorded": 200 for the first
 * delivery, every duplicate and every anomaly, since retrying cannot change any of them.
 */
@Path("/api/payments/callback")
@Produces(MediaType.APPLICATION_JSON)
public class PaymentCallbackResource {

    private final CallbackSignature signature;
    private final StrictJson json;
    private final PaymentService payments;
    /** Deliveries by the secret that signed them: once "previous" stays at zero, it can be dropped. */
    private final Counter signedWithCurrent;
    private final Counter signedWithPrevious;

    PaymentCallbackResource(CallbackSignature signature, StrictJson json, PaymentService payments,
                            MeterRegistry registry) {
        this.signature = signature;
        this.json = json;
        this.payments = payments;
        this.signedWithCurrent = signatures(registry, "current");
        this.signedWithPrevious = signatures(registry, "previous");
    }

    private static Counter signatures(MeterRegistry registry, String secret) {
        return Counter.builder("idem.callback.signatures")
                .description("Callbacks accepted, by the secret that signed them")
                .tag("secret", secret)
                .register(registry);
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> receive(@HeaderParam("X-Pay-Timestamp") String timestamp,
                                 @HeaderParam("X-Pay-Signature") String signed,
                                 byte[] body) {
        CallbackSignature.Check check = signature.verify(timestamp, signed, body == null ? new byte[0] : body);
        if (check == CallbackSignature.Check.VALID) {
            signedWithCurrent.increment();
        } else if (check == CallbackSignature.Check.VALID_PREVIOUS) {
            signedWithPrevious.increment();
        } else {
            return Uni.createFrom().item(Problem.response(401, "SIGNATURE_INVALID", switch (check) {
                case MISSING -> "X-Pay-Timestamp and X-Pay-Signature are required";
                case MALFORMED -> "X-Pay-Timestamp must be epoch seconds and X-Pay-Signature hex";
                case STALE -> "X-Pay-Timestamp is outside the accepted window";
                default -> "the signature does not match";
            }));
        }
        Parsed<PaymentCallback> parsed = json.read(body, PaymentCallback.class, PaymentCallback::violation);
        if (parsed instanceof Parsed.Invalid<PaymentCallback> invalid) {
            return Uni.createFrom().item(Problem.badRequest(invalid.detail()));
        }
        PaymentCallback callback = ((Parsed.Valid<PaymentCallback>) parsed).value();
        return payments.apply(callback, null).map(outcome -> outcome.accept(ANSWERS));
    }

    private static final Outcome.Cases<Response> ANSWERS = new Outcome.Cases<>() {
        public Response processed(Outcome.Processed o) {
            return Json.ok(o.result());
        }

        public Response duplicate(Outcome.Duplicate o) {
            return Json.ok(o.result().copy().put("duplicate", true));
        }

        public Response anomaly(Outcome.Anomaly o) {
            return Json.ok(o.result());
        }

        public Response inFlight(Outcome.InFlight o) {
            return Problem.retryLater(409, "CALLBACK_IN_FLIGHT", "this notification is still being processed",
                    o.retryAfter());
        }

        public Response keyReused(Outcome.KeyReused o) {
            return Problem.response(422, "IDEMPOTENCY_KEY_REUSED",
                    "this tradeNo and status were received before with a different order or amount");
        }

        public Response rejected(Outcome.Rejected o) {
            if (Outcome.Rejected.INVALID_DATA.equals(o.reason())) {
                return Problem.badRequest(o.detail());
            }
            return "ORDER_NOT_FOUND".equals(o.reason())
                    ? Problem.response(404, "ORDER_NOT_FOUND", o.detail())
                    : Problem.response(409, o.reason(), o.detail());
        }
    };
}
