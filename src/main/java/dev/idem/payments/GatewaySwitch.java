package dev.idem.payments;

import dev.idem.payments.alipay.AlipayNotifications;
import dev.idem.payments.alipay.AlipayNotifyResource;
import dev.idem.payments.wechatpay.WeChatPayNotifications;
import dev.idem.payments.wechatpay.WeChatPayNotifyResource;
import dev.idem.web.Problem;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Response;
import java.util.Optional;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * A gateway whose keys are not configured is switched off: its path answers 404 as an unknown path
 * does. Checked before routing, so that the method or media type of a request cannot earn it a
 * 405 or 415 from a path that is off.
 */
public class GatewaySwitch {

    private final boolean wechatPayOff;
    private final boolean alipayOff;

    GatewaySwitch(WeChatPayNotifications wechatPay, AlipayNotifications alipay) {
        this.wechatPayOff = !wechatPay.enabled();
        this.alipayOff = !alipay.enabled();
    }

    @ServerRequestFilter(preMatching = true)
    public Optional<Response> switchedOff(ContainerRequestContext request) {
        String path = request.getUriInfo().getPath();
        boolean off = wechatPayOff && under(path, WeChatPayNotifyResource.PATH)
                || alipayOff && under(path, AlipayNotifyResource.PATH);
        if (off) {
            return Optional.of(Problem.response(404, "NOT_FOUND", "HTTP 404 Not Found"));
        }
        return Optional.empty();
    }

    private static boolean under(String path, String resource) {
        return path.equals(resource) || path.startsWith(resource + "/");
    }
}
