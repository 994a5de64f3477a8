package dev.idem.testing;

import static io.restassured.RestAssured.given;

import com.sun.net.httpserver.HttpExchange;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

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
    /** The application's own key pair, which signs its requests ({@link TestKeys}). */
    public static final String APP_KEY = "alipay-app";
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
        signed.put("sign", rsa2(signedContent(parameters)));
        return form(signed);
    }

    /** RSA2: the base64 SHA256withRSA signature of {@code content}'s UTF-8 bytes, by Alipay's key. */
    private String rsa2(String content) {
        try {
            Signature signer = Signature.getInstance("SHA256withRSA");
            signer.initSign(alipayKey);
            signer.update(content.getBytes(StandardCharsets.UTF_8));
            return Base64.getEncoder().encodeToString(signer.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
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

    /** Alipay's open-platform gateway for the test profile's application, on loopback: {@code alipay.trade.query}. */
    public Api serve() {
        return new Api(this, TestKeys.publicKey(APP_KEY));
    }

    /**
     * {@code POST /gateway.do} as Alipay's open platform serves {@code alipay.trade.query}: the form's
     * {@code sign} (RSA2 over every parameter but {@code sign}, empty ones left out, sorted,
     * {@code k=v&k=v}) must verify with the application's public key, with this {@code app_id} and a
     * {@code biz_content} naming {@code out_trade_no}, or the answer is {@code 40002}
     * {@code isv.invalid-signature}. The answer is
     * {@code {"alipay_trade_query_response":{...},"sign":"..."}}, its sign over the response object's
     * exact text, by Alipay's key: {@code 10000} with the trade, or {@code 40004}
     * {@code ACQ.TRADE_NOT_EXIST} for an order never seen.
     */
    public static final class Api extends GatewayApi {

        private final AlipaySimulator gateway;
        private final AlipaySimulator forger;
        private final PublicKey appKey;

        Api(AlipaySimulator gateway, PublicKey appKey) {
            super("/gateway.do");
            this.gateway = gateway;
            this.forger = new AlipaySimulator(TestKeys.generate().getPrivate(), gateway.appId);
            this.appKey = appKey;
            route(DOWNLOAD, this::download);
        }

        private static final String BILL_METHOD = "alipay.data.dataservice.bill.downloadurl.query";
        private static final String DOWNLOAD = "/bills/download";

        /**
         * {@code alipay.data.dataservice.bill.downloadurl.query} with {@code bill_type=trade}: the
         * address of the day's zip, valid for one download, in a signed answer ({@code 40004}
         * {@code isp.bill_not_exist} for a day without trades). Tampered: signed with a key that is
         * not Alipay's.
         */
        @Override
        protected Optional<Answer> other(HttpExchange exchange, byte[] body) {
            Map<String, String> form = form(body);
            if (!BILL_METHOD.equals(form.get("method"))) {
                return Optional.empty();
            }
            if (!signedByApp(exchange, form)) {
                return Optional.of(refusal());
            }
            AlipaySimulator signer = tampered() ? forger : gateway;
            LocalDate date = LocalDate.parse(new JsonObject(form.get("biz_content")).getString("bill_date"));
            List<BillLine> lines = billLines(date);
            if (lines.isEmpty()) {
                return Optional.of(signed(signer, BILL_RESPONSE, new JsonObject().put("code", "40004")
                        .put("msg", "Business Failed").put("sub_code", "isp.bill_not_exist").put("sub_msg", "账单不存在")));
            }
            String token = offer(tradeBill(date, lines));
            return Optional.of(signed(signer, BILL_RESPONSE, new JsonObject().put("code", "10000").put("msg", "Success")
                    .put("bill_download_url", base() + DOWNLOAD + "?token=" + token)));
        }

        /** The zip, for whoever holds the address: Alipay's downloads are not signed. */
        private Answer download(HttpExchange exchange, byte[] body) {
            String query = String.valueOf(exchange.getRequestURI().getRawQuery());
            byte[] zip = take(query.startsWith("token=") ? query.substring(6) : null);
            return zip == null ? new Answer(404, Map.of(), new byte[0])
                    : new Answer(200, Map.of("Content-Type", "application/oct-stream"), zip);
        }

        public String gatewayUrl() {
            return base() + "/gateway.do";
        }

        @Override
        protected Supplier<HttpRequest> notification(Trade trade) {
            String form = gateway.sign(gateway.notification(trade.orderId(), trade.tradeNo(), "TRADE_SUCCESS",
                    trade.cents()));
            return () -> request(form);
        }

        @Override
        protected Optional<Asked> read(HttpExchange exchange, byte[] body) {
            Map<String, String> form = form(body);
            if (!"alipay.trade.query".equals(form.get("method")) || !signedByApp(exchange, form)) {
                return Optional.empty();
            }
            String outTradeNo = new JsonObject(form.get("biz_content")).getString("out_trade_no");
            return outTradeNo == null ? Optional.empty() : Optional.of(new Asked(outTradeNo));
        }

        private static Map<String, String> form(byte[] body) {
            Map<String, String> form = new TreeMap<>();
            for (String pair : new String(body, StandardCharsets.US_ASCII).split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    form.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
            return form;
        }

        /** A POST of this application's, RSA2-signed by its key, with a {@code biz_content}. */
        private boolean signedByApp(HttpExchange exchange, Map<String, String> form) {
            String content = form.entrySet().stream()
                    .filter(p -> !p.getKey().equals("sign") && !p.getValue().isEmpty())
                    .map(p -> p.getKey() + "=" + p.getValue())
                    .collect(Collectors.joining("&"));
            return "POST".equals(exchange.getRequestMethod()) && gateway.appId.equals(form.get("app_id"))
                    && "RSA2".equals(form.get("sign_type")) && form.get("sign") != null && form.get("biz_content") != null
                    && TestKeys.verifies(appKey, content.getBytes(StandardCharsets.UTF_8), form.get("sign"));
        }

        @Override
        protected Answer refusal() {
            return signed(gateway, new JsonObject().put("code", "40002").put("msg", "Invalid Arguments")
                    .put("sub_code", "isv.invalid-signature").put("sub_msg", "验签出错"));
        }

        @Override
        protected Answer answer(String orderId, Trade trade, boolean forged) {
            AlipaySimulator signer = forged ? forger : gateway;
            if (trade == null) {
                return signed(signer, new JsonObject().put("code", "40004").put("msg", "Business Failed")
                        .put("sub_code", "ACQ.TRADE_NOT_EXIST").put("sub_msg", "交易不存在")
                        .put("buyer_pay_amount", "0.00").put("invoice_amount", "0.00").put("out_trade_no", orderId)
                        .put("point_amount", "0.00").put("receipt_amount", "0.00"));
            }
            String amount = yuan(trade.cents());
            JsonObject response = new JsonObject().put("code", "10000").put("msg", "Success")
                    .put("buyer_logon_id", "159****5620")
                    .put("buyer_pay_amount", trade.state() == State.PAID ? amount : "0.00")
                    .put("buyer_user_id", "2088101117955611")
                    .put("invoice_amount", trade.state() == State.PAID ? amount : "0.00")
                    .put("out_trade_no", orderId)
                    .put("point_amount", "0.00")
                    .put("receipt_amount", trade.state() == State.PAID ? amount : "0.00")
                    .put("total_amount", amount)
                    .put("trade_no", trade.tradeNo() == null ? "2013112011001004330000121536" : trade.tradeNo())
                    .put("trade_status", switch (trade.state()) {
                        case PAID -> "TRADE_SUCCESS";
                        case UNPAID -> "WAIT_BUYER_PAY";
                        case CLOSED -> "TRADE_CLOSED";
                    });
            if (trade.state() == State.PAID) {
                response.put("send_pay_date",
                        LocalDateTime.ofInstant(trade.paidAt(), ZoneId.of("Asia/Shanghai")).format(ALIPAY_TIME));
            }
            return signed(signer, response);
        }

        private static final String BILL_RESPONSE = "alipay_data_dataservice_bill_downloadurl_query_response";

        private static Answer signed(AlipaySimulator signer, JsonObject response) {
            return signed(signer, "alipay_trade_query_response", response);
        }

        /** Alipay's answer: the response object's text, and the sign of exactly that text beside it. */
        private static Answer signed(AlipaySimulator signer, String name, JsonObject response) {
            String text = response.encode();
            String sign = signer.rsa2(text);
            String body = "{\"" + name + "\":" + text + ",\"sign\":\"" + sign + "\"}";
            return new Answer(200, Map.of("Content-Type", "text/html;charset=utf-8"),
                    body.getBytes(StandardCharsets.UTF_8));
        }
    }

    /** The merchant's partner id, in the bill's file names and header. */
    public static final String PID = "2088101106499364";
    private static final Charset GBK = Charset.forName("GBK");
    private static final DateTimeFormatter CHINESE_DAY = DateTimeFormatter.ofPattern("yyyy年MM月dd日 HH:mm:ss");

    /**
     * The trade bill's zip as Alipay gives it for download: the business detail (业务明细) and its
     * summary (汇总), CSV in GBK. The detail's values are padded with a tab, refunds are negative,
     * and the last comment lines count the trades and the refunds.
     */
    public static byte[] tradeBill(LocalDate date, List<GatewayApi.BillLine> lines) {
        StringBuilder detail = new StringBuilder("#支付宝业务明细查询\r\n#账号：[" + PID + "]\r\n")
                .append("#起始日期：[").append(date.atStartOfDay().format(CHINESE_DAY)).append("]   终止日期：[")
                .append(date.plusDays(1).atStartOfDay().format(CHINESE_DAY)).append("]\r\n")
                .append("#-----------------------------------------业务明细列表----------------------------------------\r\n")
                .append("支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,对方账户,订单金额（元）,"
                        + "商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,商家优惠（元）,券核销金额（元）,券名称,"
                        + "商家红包消费金额（元）,卡消费金额（元）,退款批次号/请求号,服务费（元）,分润（元）,备注\r\n");
        int trades = 0;
        int refunds = 0;
        for (GatewayApi.BillLine line : lines) {
            String time = LocalDateTime.ofInstant(line.at(), GatewayApi.GATEWAY_TIME).format(ALIPAY_TIME);
            String amount = (line.refund() ? "-" : "") + yuan(line.cents());
            List<String> values = List.of(line.tradeNo(), line.orderId(), line.refund() ? "退款" : "交易", "订单 " + line.orderId(),
                    time, time, "", "", "", "", "159****5620", amount, amount, "0.00", "0.00", "0.00", "0.00", "0.00", "",
                    "0.00", "0.00", line.refund() ? line.refundNo() : "", "0.00", "0.00", "");
            detail.append(values.stream().map(v -> v + "\t").collect(Collectors.joining(","))).append("\r\n");
            trades += line.refund() ? 0 : 1;
            refunds += line.refund() ? 1 : 0;
        }
        detail.append("#-----------------------------------------业务明细列表结束------------------------------------\r\n")
                .append("#交易合计：").append(trades).append("笔，退款合计：").append(refunds).append("笔\r\n")
                .append("#导出时间：[").append(date.plusDays(1).atTime(9, 6, 40).format(CHINESE_DAY)).append("]\r\n");
        String summary = "#支付宝业务汇总查询\r\n#账号：[" + PID + "]\r\n门店编号,门店名称,交易订单总笔数,退款订单总笔数,"
                + "订单金额（元）,商家实收（元）\r\n合计,,"+ trades + "," + refunds + ",,\r\n";
        String name = PID + "_" + date.format(DateTimeFormatter.BASIC_ISO_DATE);
        ByteArrayOutputStream zip = new ByteArrayOutputStream();
        try (ZipOutputStream out = new ZipOutputStream(zip, GBK)) {
            out.putNextEntry(new ZipEntry(name + "_业务明细.csv"));
            out.write(detail.toString().getBytes(GBK));
            out.closeEntry();
            out.putNextEntry(new ZipEntry(name + "_业务明细(汇总).csv"));
            out.write(summary.getBytes(GBK));
            out.closeEntry();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return zip.toByteArray();
    }

    /** Delivers {@code parameters} on Alipay's schedule compressed {@code compression} times. */
    public List<RetrySchedule.Attempt> deliverOnSchedule(Map<String, String> parameters, long compression,
                                                         Consumer<RetrySchedule.Attempt> afterEach) {
        String form = sign(parameters);
        return SCHEDULE.deliver(() -> request(form), AlipaySimulator::received, compression, afterEach);
    }
}
