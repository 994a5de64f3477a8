package dev.idem.testing;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/**
 * The payment gateways switched on with keys made for the build ({@link TestKeys}): WeChat Pay
 * with two platform keys (as during a rotation) and an APIv3 key, Alipay with its public key and
 * an app id. No real gateway's keys.
 */
public class GatewaysOn implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "idem.gateways.wechatpay.api-v3-key", WeChatPaySimulator.API_V3_KEY,
                "idem.gateways.wechatpay.platform-keys.\"" + WeChatPaySimulator.SERIAL + "\"",
                TestKeys.publicPem("wechatpay-platform-1"),
                "idem.gateways.wechatpay.platform-keys.\"" + WeChatPaySimulator.SECOND_SERIAL + "\"",
                TestKeys.publicPem("wechatpay-platform-2"),
                "idem.gateways.alipay.app-id", AlipaySimulator.APP_ID,
                "idem.gateways.alipay.public-key", TestKeys.publicPem("alipay"));
    }
}
