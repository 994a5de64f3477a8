package dev.idem.payments.alipay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.pipeline.StrictJson.Parsed;
import java.net.URLEncoder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class AlipayFormTest {

    static AlipayForm valid(String body) {
        Parsed<AlipayForm> parsed = AlipayForm.parse(body.getBytes(StandardCharsets.US_ASCII));
        if (parsed instanceof Parsed.Valid<AlipayForm> valid) {
            return valid.value();
        }
        throw new AssertionError(((Parsed.Invalid<AlipayForm>) parsed).detail());
    }

    static void invalid(String body) {
        assertInstanceOf(Parsed.Invalid.class, AlipayForm.parse(body.getBytes(StandardCharsets.ISO_8859_1)), body);
    }

    @Test
    void theSignedContentIsSortedDecodedAndLeavesOutSignSignTypeAndEmptyValues() {
        AlipayForm form = valid("trade_no=2026&sign=abc%2B%3D&app_id=1&body=&subject=a+b%26c%3Dd&sign_type=RSA2"
                + "&fund_bill_list=%5B%7B%22amount%22%3A%2219.99%22%7D%5D");

        assertEquals("app_id=1&fund_bill_list=[{\"amount\":\"19.99\"}]&subject=a b&c=d&trade_no=2026",
                new String(form.signedContent(), StandardCharsets.UTF_8));
        assertEquals("abc+=", form.get("sign").orElseThrow());
    }

    @Test
    void theFormsOwnCharsetDecodesItAndEncodesWhatWasSigned() {
        Charset gbk = Charset.forName("GBK");
        AlipayForm form = valid("charset=gbk&subject=" + URLEncoder.encode("订单", gbk));

        assertEquals("订单", form.get("subject").orElseThrow());
        assertArrayEquals("charset=gbk&subject=订单".getBytes(gbk), form.signedContent());
        assertEquals("订单", valid("subject=" + URLEncoder.encode("订单", StandardCharsets.UTF_8)).get("subject").orElseThrow());
    }

    @Test
    void ambiguousOrBrokenFormsAreRefused() {
        invalid("");
        invalid("a=1&a=2");
        invalid("a=1&%61=2");
        invalid("a=%zz");
        invalid("a=%e");
        invalid("a=\u00e9");
        invalid("a=1\n");
        invalid("charset=no-such-charset&a=1");
    }
}
