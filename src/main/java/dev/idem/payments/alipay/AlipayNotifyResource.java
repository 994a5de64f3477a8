package dev.idem.payments.alipay;

import static dev.idem.payments.GatewayNotices.status;

import dev.idem.payments.GatewayNotices;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;

/**
 * Alipay's asynchronous notification. Alipay stops retrying only when it reads the seven letters
 * {@code success}; anything else is retried on its schedule. So {@code success} means "durably
 * recorded": first delivery, duplicate, anomaly, or a state idem ignores; every other answer is
 * {@code failure}, with a status that tells people (not Alipay) why.
 */
@Path(AlipayNotifyResource.PATH)
public class AlipayNotifyResource {

    public static final String PATH = "/api/payments/alipay/notify";

    private final AlipayNotifications notifications;
    private final GatewayNotices notices;

    AlipayNotifyResource(AlipayNotifications notifications, GatewayNotices notices) {
        this.notifications = notifications;
        this.notices = notices;
    }

    @POST
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Uni<Response> receive(byte[] body) {
        return notices.answer("alipay", notifications.read(body == null ? new byte[0] : body), ANSWERS);
    }

    private static Response failure(int status) {
        return Response.status(status).type(MediaType.TEXT_PLAIN_TYPE).entity("failure").build();
    }

    private static final GatewayNotices.Answers ANSWERS = new GatewayNotices.Answers() {
        public Response recorded() {
            return Response.ok("success", MediaType.TEXT_PLAIN_TYPE).build();
        }

        public Response unauthentic(String reason) {
            return failure(400);
        }

        public Response unreadable(String reason) {
            return failure(400);
        }

        public Response inFlight(Duration retryAfter) {
            return failure(409);
        }

        public Response keyReused() {
            return failure(422);
        }

        /** An unknown order is retried: the order may not be stored yet, and retries cost nothing. */
        public Response rejected(String reason, String detail) {
            return failure(status(reason));
        }
    };
}
