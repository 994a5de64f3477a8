package dev.idem.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The gateways on ({@link GatewaysOn}) and their orders queried at the simulators' APIs on
 * loopback, with the merchant's and the application's keys made for the build. Time is short: an
 * order is first asked a second after it was made, then at most every two seconds, for ten minutes.
 */
public class GatewayQueriesOn extends GatewaysOn {

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> config = new HashMap<>(super.getConfigOverrides());
        config.put("idem.gateways.wechatpay.mchid", WeChatPaySimulator.MCHID);
        config.put("idem.gateways.wechatpay.merchant-serial", WeChatPaySimulator.MERCHANT_SERIAL);
        config.put("idem.gateways.wechatpay.merchant-private-key", TestKeys.privatePem(WeChatPaySimulator.MERCHANT_KEY));
        config.put("idem.gateways.alipay.app-private-key", TestKeys.privatePem(AlipaySimulator.APP_KEY));
        for (String gateway : List.of("wechatpay", "alipay")) {
            config.put("idem.gateways." + gateway + ".query.first-delay", "1s");
            config.put("idem.gateways." + gateway + ".query.max-interval", "2s");
        }
        config.put("idem.orders.expiry", "10m");
        return config;
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(Apis.class));
    }

    /** Both gateways' APIs, started before the service, which is pointed at them. */
    public static class Apis implements QuarkusTestResourceLifecycleManager {

        private static volatile WeChatPaySimulator.Api wechatpay;
        private static volatile AlipaySimulator.Api alipay;

        public static WeChatPaySimulator.Api wechatpay() {
            return wechatpay;
        }

        public static AlipaySimulator.Api alipay() {
            return alipay;
        }

        @Override
        public Map<String, String> start() {
            wechatpay = WeChatPaySimulator.configured().serve();
            alipay = AlipaySimulator.configured().serve();
            return Map.of(
                    "idem.gateways.wechatpay.api-base", wechatpay.base(),
                    "idem.gateways.alipay.gateway-url", alipay.gatewayUrl());
        }

        @Override
        public void stop() {
            wechatpay.close();
            alipay.close();
        }
    }
}
