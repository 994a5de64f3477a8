package dev.idem.testing;

import java.util.HashMap;
import java.util.Map;

/**
 * The gateways' simulators and the merchant's keys as {@link GatewayQueriesOn} has them, with the
 * active query off: a payment whose notification never came is then found only by the bill.
 */
public class GatewayBillsOn extends GatewayQueriesOn {

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> config = new HashMap<>(super.getConfigOverrides());
        config.put("idem.gateways.wechatpay.query.enabled", "false");
        config.put("idem.gateways.alipay.query.enabled", "false");
        return config;
    }
}
