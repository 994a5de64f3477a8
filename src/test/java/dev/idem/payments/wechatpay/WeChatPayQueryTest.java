package dev.idem.payments.wechatpay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class WeChatPayQueryTest {

    /** The documented form: scheme, then mchid, nonce_str, signature, timestamp, serial_no, each quoted. */
    @Test
    void theAuthorizationSignsMethodPathTimestampNonceAndTheEmptyBody() {
        KeyPair merchant = TestKeys.generate();
        String path = "/v3/pay/transactions/out-trade-no/1217752501201407033233368018?mchid=1230000109";
        String header = WeChatPayQuery.authorization(
                new WeChatPayQuery.Merchant("1230000109", "1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C",
                        merchant.getPrivate()),
                "GET", path, 1554208460L, "593BEC0C930BF1AFEB40B4A08C8FB242");

        assertTrue(header.startsWith("WECHATPAY2-SHA256-RSA2048 mchid=\"1230000109\",nonce_str=\""), header);
        Map<String, String> p = new HashMap<>();
        Matcher m = Pattern.compile("(\\w+)=\"([^\"]*)\"").matcher(header);
        while (m.find()) {
            p.put(m.group(1), m.group(2));
        }
        assertEquals("593BEC0C930BF1AFEB40B4A08C8FB242", p.get("nonce_str"));
        assertEquals("1554208460", p.get("timestamp"));
        assertEquals("1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C", p.get("serial_no"));
        String message = "GET\n" + path + "\n1554208460\n593BEC0C930BF1AFEB40B4A08C8FB242\n\n";
        assertTrue(TestKeys.verifies(merchant.getPublic(), message.getBytes(StandardCharsets.UTF_8), p.get("signature")));
    }
}
