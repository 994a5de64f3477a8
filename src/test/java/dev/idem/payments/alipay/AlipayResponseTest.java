package dev.idem.payments.alipay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AlipayResponseTest {

    static Optional<AlipayResponse> read(String body) {
        return AlipayResponse.read(body.getBytes(StandardCharsets.UTF_8), AlipayQuery.RESPONSE);
    }

    /** The signed text is the object as sent, spaces, escapes and non-ASCII included, whatever comes around it. */
    @Test
    void theResponseObjectIsCutOutByteForByte() {
        String object = "{ \"code\" : \"10000\", \"msg\":\"Success\", \"sub_msg\":\"交易\\u5b58在\","
                + " \"nested\": {\"a\": [1, {\"b\": \"}\"}]} }";
        String body = "{\"alipay_cert_sn\":\"x\",  \"alipay_trade_query_response\" :" + object + " , \"sign\":\"c2ln\"}";
        AlipayResponse response = read(body).orElseThrow();
        assertEquals(object, new String(response.content(), StandardCharsets.UTF_8));
        assertEquals(Optional.of("c2ln"), response.sign());
        AlipayResponse signFirst = read("{\"sign\":\"c2ln\",\"alipay_trade_query_response\":" + object + "}").orElseThrow();
        assertEquals(object, new String(signFirst.content(), StandardCharsets.UTF_8));
    }

    @Test
    void anythingElseIsNoAnswer() {
        assertTrue(read("{\"alipay_trade_query_response\":{\"code\":\"10000\"}}").orElseThrow().sign().isEmpty());
        assertTrue(read("{\"other_response\":{\"code\":\"10000\"},\"sign\":\"x\"}").isEmpty());
        assertTrue(read("{\"alipay_trade_query_response\":\"text\",\"sign\":\"x\"}").isEmpty());
        assertTrue(read("{\"alipay_trade_query_response\":{\"code\":\"10000\"}").isEmpty(), "truncated");
        assertTrue(read("{\"alipay_trade_query_response\":{},\"sign\":\"x\"} trailing").isEmpty());
        assertTrue(read("[]").isEmpty());
        assertTrue(read("{\"alipay_trade_query_response\":{\"code\":\"1\"},\"alipay_trade_query_response\":{}}")
                .isEmpty(), "a member named twice");
    }
}
