package dev.idem.testing;

import static io.restassured.RestAssured.given;

import io.restassured.response.Response;
import java.math.BigDecimal;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Alipay as it notifies a merchant asynchronously: a form of parameters signed RSA2 (SHA256withRSA
 * over every parameter but {@code sign} and {@code sign_type}, empty ones left out, sorted,
 * {@code k=v&k=v}) with Alipay's private key, retried on Alipay's schedule until the answer is
 * {@code success}. Written from Alipay's documentation, apart from the service's own verifier.
 */
public final class AlipaySimulator {

    public static final String PATH = "/api/payments/alipay/notify";
    /** The test profile's application id (its key pair: {@link TestKeys}). */
    public static final String APP_ID = "2021000000000001";
    /** Alipay's retries after the first delivery: 7 in 24 h 24 min. */
    public static final RetrySchedule SCHEDULE = new RetrySchedule(List.of(
            Duration.ofMinutes(4), Duration.ofMinutes(10), Duration.ofMinutes(10), Duration.ofHours(1),
            Duration.ofHours(2), Duration.ofHours(6), Duration.ofHours(15)));

    private static final DateTimeFormatter ALIPAY_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private final PrivateKey alipayKey;
    private final String appId;

    public AlipaySimulator(PrivateKey alipayKey, String appId) {
        this.alipayKey = alipayKey;
        this.appId = appId;
    }

    public static AlipaySimulator configured() {
        return new AlipaySimulator(TestKeys.privateKey("alipay"), APP_ID);
    }

    /** A key the service has never seen. */
    public static AlipaySimulator generated() {
        return new AlipaySimulator(TestKeys.generate().getPrivate(), APP_ID);
    }

    public AlipaySimulator withAppId(String other) {
        return new AlipaySimulator(alipayKey, other);
    }

    /** Cents as Alipay writes yuan: {@code 1999} → {@code 19.99}. */
    public static String yuan(long cents) {
        return BigDecimal.valueOf(cents, 2).toPlainString();
    }

    /** The parameters of a trade_status_sync notification, unsigned, as Alipay's documentation lists them. */
    public Map<String, String> notification(String outTradeNo, String tradeNo, String tradeStatus, String totalAmount) {
        String now = LocalDateTime.now(ZoneId.of("Asia/Shanghai")).format(ALIPAY_TIME);
        Map<String, String> p = new LinkedHashMap<>();
        p.put("notify_time", now);
        p.put("notify_type", "trade_status_sync");
        p.put("notify_id", UUID.randomUUID().toString().replace("-", ""));
        p.put("app_id", appId);
        p.put("auth_app_id", appId);
        p.put("charset", "utf-8");
        p.put("version", "1.0");
        p.put("trade_no", tradeNo);
        p.put("out_trade_no", outTradeNo);
        p.put("buyer_id", "2088102122524333");
        p.put("seller_id", "2088101106499364");
        p.put("trade_status", tradeStatus);
        p.put("total_amount", totalAmount);
        p.put("receipt_amount", totalAmount);
        p.put("buyer_pay_amount", totalAmount);
        p.put("invoice_amount", totalAmount);
        p.put("point_amount", "0.00");
        p.put("subject", "订单 " + outTradeNo);
        p.put("body", "");
        p.put("fund_bill_list", "[{\"amount\":\"" + totalAmount + "\",\"fundChannel\":\"ALIPAYACCOUNT\"}]");
        p.put("gmt_create", now);
        if (!"WAIT_BUYER_PAY".equals(tradeStatus)) {
            p.put("gmt_payment", now);
        }
        return p;
    }

    public Map<String, String> notification(String outTradeNo, String tradeNo, String tradeStatus, long cents) {
        return notification(outTradeNo, tradeNo, tradeStatus, yuan(cents));
    }

    /** What Alipay signs. */
    public static String signedContent(Map<String, String> parameters) {
        return new TreeMap<>(parameters).entrySet().stream()
                .filter(p -> !p.getKey().equals("sign") && !p.getKey().equals("sign_type"))
                .filter(p -> p.getValue() != null && !p.getValue().isEmpty())
                .map(p -> p.getKey() + "=" + p.getValue())
                .collect(Collectors.joining("&"));
    }

    /** The parameters with {@code sign_type} and {@code sign}, as the form body Alipay posts. */
    public String sign(Map<String, String> parameters) {
        Map<String, String> signed = new LinkedHashMap<>(parameters);
        signed.put("sign_type", "RSA2");
        try {
            Signature signer = Signature.getInstance("SHA256withRSA");
            signer.initSign(alipayKey);
            signer.update(signedContent(parameters).getBytes(StandardCharsets.UTF_8));
            signed.put("sign", Base64.getEncoder().encodeToString(signer.sign()));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        return form(signed);
    }

    public static String form(Map<String, String> parameters) {
        return parameters.entrySet().stream()
                .map(p -> URLEncoder.encode(p.getKey(), StandardCharsets.UTF_8) + "="
                        + URLEncoder.encode(p.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
    }

    public static Response deliver(String form) {
        return given().contentType("application/x-www-form-urlencoded; charset=utf-8")
                .body(form)
                .post(PATH);
    }

    public static HttpRequest request(String form) {
        return HttpRequest.newBuilder(Http.uri(PATH))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
                .POST(HttpRequest.BodyPublishers.ofString(form, StandardCharsets.US_ASCII))
                .build();
    }

    /** Alipay reads exactly {@code success} as "received"; anything else, or no answer, is retried. */
    public static boolean received(RetrySchedule.Attempt attempt) {
        return "success".equals(attempt.body());
    }

    /** Delivers {@code parameters} on Alipay's schedule compressed {@code compression} times. */
    public List<RetrySchedule.Attempt> deliverOnSchedule(Map<String, String> parameters, long compression,
                                                         Consumer<RetrySchedule.Attempt> afterEach) {
        String form = sign(parameters);
        return SCHEDULE.deliver(() -> request(form), AlipaySimulator::received, compression, afterEach);
    }
}
