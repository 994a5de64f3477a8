package dev.idem.payments.wechatpay;

import static dev.idem.payments.GatewayNotices.status;

import dev.idem.payments.GatewayNotices;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;

/**
 * WeChat Pay API v3's payment notification. WeChat Pay stops retrying on 200 or 204 with no body;
 * any 4xx/5xx answer carries {@code {"code":"FAIL","message":...}} and is retried on its schedule.
 * So 200 means "durably recorded": first delivery, duplicate, anomaly, or a state idem ignores.
 */
@Path(WeChatPayNotifyResource.PATH)
public class WeChatPayNotifyResource {

    public static final String PATH = "/api/payments/wechatpay/notify";

    private final WeChatPayNotifications notifications;
    private final GatewayNotices notices;

    WeChatPayNotifyResource(WeChatPayNotifications notifications, GatewayNotices notices) {
        this.notifications = notifications;
        this.notices = notices;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> receive(@HeaderParam("Wechatpay-Serial") String serial,
                                 @HeaderParam("Wechatpay-Timestamp") String timestamp,
                                 @HeaderParam("Wechatpay-Nonce") String nonce,
                                 @HeaderParam("Wechatpay-Signature") String signature,
                                 byte[] body) {
        return notices.answer("wechatpay",
                notifications.read(serial, timestamp, nonce, signature, body == null ? new byte[0] : body), ANSWERS);
    }

    private static Response fail(int status, String message) {
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE)
                .entity(new JsonObject().put("code", "FAIL").put("message", message).encode())
                .build();
    }

    private static final GatewayNotices.Answers ANSWERS = new GatewayNotices.Answers() {
        public Response recorded() {
            return Response.ok().build();
        }

        public Response unauthentic(String reason) {
            return fail(401, reason);
        }

        public Response unreadable(String reason) {
            return fail(400, reason);
        }

        public Response inFlight(Duration retryAfter) {
            return Response.fromResponse(fail(409, "this notification is still being processed"))
                    .header("Retry-After", Math.max(1, (retryAfter.toMillis() + 999) / 1000))
                    .build();
        }

        public Response keyReused() {
            return fail(422, "this transaction_id and trade_state were received before with another order or amount");
        }

        /** An unknown order is retried: the order may not be stored yet, and 24 h of retries cost nothing. */
        public Response rejected(String reason, String detail) {
            return fail(status(reason), detail);
        }
    };
}
