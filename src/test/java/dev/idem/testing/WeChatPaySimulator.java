package dev.idem.testing;

import static io.restassured.RestAssured.given;

import com.sun.net.httpserver.HttpExchange;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * WeChat Pay API v3 as it notifies a merchant of a payment: the transaction encrypted with
 * AEAD_AES_256_GCM under the APIv3 key, the body signed with the platform's private key
 * (SHA256withRSA over timestamp, nonce and body), each delivery signed afresh, retried on WeChat
 * Pay's schedule until it reads 200 or 204. Written from WeChat Pay's documentation, apart from
 * the service's own verifier.
 */
public final class WeChatPaySimulator {

    public static final String PATH = "/api/payments/wechatpay/notify";
    /** The test profile's keys ({@link TestKeys}: made for the build). */
    public static final String SERIAL = "5E1A11AB0000000000000000000000000000TEST";
    public static final String SECOND_SERIAL = "PUB_KEY_ID_0000000000000000000000000000TEST";
    public static final String API_V3_KEY = TestKeys.secret("wechatpay-apiv3");
    /** The test profile's merchant: its id, and its API certificate's serial and key ({@link TestKeys}). */
    public static final String MCHID = "1230000109";
    public static final String MERCHANT_SERIAL = "3775B6A45ACD588826D15E583A95F5DD00000000";
    public static final String MERCHANT_KEY = "wechatpay-merchant";
    /** WeChat Pay's retries after the first delivery: 15 in 24 h 4 min. */
    public static final RetrySchedule SCHEDULE = new RetrySchedule(List.of(
            Duration.ofSeconds(15), Duration.ofSeconds(15), Duration.ofSeconds(30), Duration.ofMinutes(3),
            Duration.ofMinutes(10), Duration.ofMinutes(20), Duration.ofMinutes(30), Duration.ofMinutes(30),
            Duration.ofMinutes(30), Duration.ofMinutes(60), Duration.ofHours(3), Duration.ofHours(3),
            Duration.ofHours(3), Duration.ofHours(6), Duration.ofHours(6)));

    private final String serial;
    private final PrivateKey platformKey;
    private final String apiV3Key;

    public WeChatPaySimulator(String serial, PrivateKey platformKey, String apiV3Key) {
        if (apiV3Key.getBytes(StandardCharsets.UTF_8).length != 32) {
            throw new IllegalArgumentException("an APIv3 key is 32 bytes");
        }
        this.serial = serial;
        this.platformKey = platformKey;
        this.apiV3Key = apiV3Key;
    }

    /** WeChat Pay as the test profile configured it. */
    public static WeChatPaySimulator configured() {
        return new WeChatPaySimulator(SERIAL, TestKeys.privateKey("wechatpay-platform-1"), API_V3_KEY);
    }

    /** The same merchant, signing with the platform's second (rotated-in) key. */
    public static WeChatPaySimulator secondKey() {
        return new WeChatPaySimulator(SECOND_SERIAL, TestKeys.privateKey("wechatpay-platform-2"),
                API_V3_KEY);
    }

    /** Fresh keys the service has never seen, named by {@code serial}. */
    public static WeChatPaySimulator generated(String serial) {
        KeyPair pair = TestKeys.generate();
        return new WeChatPaySimulator(serial, pair.getPrivate(), TestKeys.randomString(32));
    }

    public WeChatPaySimulator withSerial(String other) {
        return new WeChatPaySimulator(other, platformKey, apiV3Key);
    }

    public WeChatPaySimulator withPlatformKey(PrivateKey other) {
        return new WeChatPaySimulator(serial, other, apiV3Key);
    }

    public WeChatPaySimulator withApiV3Key(String other) {
        return new WeChatPaySimulator(serial, platformKey, other);
    }

    public PrivateKey platformKey() {
        return platformKey;
    }

    /** The transaction object as WeChat Pay's documentation shows it (JSAPI payment). */
    public static JsonObject transaction(String outTradeNo, String transactionId, String tradeState, long totalCents) {
        JsonObject transaction = new JsonObject()
                .put("appid", "wxd678efh567hg6787")
                .put("mchid", "1230000109")
                .put("out_trade_no", outTradeNo)
                .put("transaction_id", transactionId)
                .put("trade_type", "JSAPI")
                .put("trade_state", tradeState)
                .put("trade_state_desc", "SUCCESS".equals(tradeState) ? "支付成功" : tradeState)
                .put("bank_type", "CMC")
                .put("attach", "")
                .put("payer", new JsonObject().put("openid", "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"))
                .put("amount", new JsonObject().put("total", totalCents).put("payer_total", totalCents)
                        .put("currency", "CNY").put("payer_currency", "CNY"));
        if ("SUCCESS".equals(tradeState)) {
            transaction.put("success_time", OffsetDateTime.now(ZoneOffset.ofHours(8)).truncatedTo(ChronoUnit.SECONDS).toString());
        }
        return transaction;
    }

    /** The notification's body: the transaction encrypted into {@code resource}. */
    public String notification(JsonObject transaction) {
        String nonce = TestKeys.randomString(12);
        String associatedData = "transaction";
        return envelope(new JsonObject()
                .put("original_type", "transaction")
                .put("algorithm", "AEAD_AES_256_GCM")
                .put("ciphertext", Base64.getEncoder().encodeToString(
                        encrypt(transaction.encode().getBytes(StandardCharsets.UTF_8), nonce, associatedData)))
                .put("associated_data", associatedData)
                .put("nonce", nonce), transaction.getString("trade_state"));
    }

    public String notification(String outTradeNo, String transactionId, String tradeState, long totalCents) {
        return notification(transaction(outTradeNo, transactionId, tradeState, totalCents));
    }

    /** A notification whose resource is exactly {@code resource} (for ciphertexts that do not open). */
    public static String envelope(JsonObject resource, String tradeState) {
        return new JsonObject()
                .put("id", UUID.randomUUID().toString())
                .put("create_time", OffsetDateTime.now(ZoneOffset.ofHours(8)).truncatedTo(ChronoUnit.SECONDS).toString())
                .put("resource_type", "encrypt-resource")
                .put("event_type", "TRANSACTION." + tradeState)
                .put("summary", "SUCCESS".equals(tradeState) ? "支付成功" : tradeState)
                .put("resource", resource)
                .encode();
    }

    /** AEAD_AES_256_GCM: the ciphertext followed by its 16-byte tag. */
    public byte[] encrypt(byte[] plain, String nonce, String associatedData) {
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(apiV3Key.getBytes(StandardCharsets.UTF_8), "AES"),
                    new GCMParameterSpec(128, nonce.getBytes(StandardCharsets.UTF_8)));
            cipher.updateAAD(associatedData.getBytes(StandardCharsets.UTF_8));
            return cipher.doFinal(plain);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The headers of one delivery of {@code body}, signed at {@code timestamp}. */
    public record Headers(String serial, String timestamp, String nonce, String signature) {}

    public Headers sign(String body, long timestamp) {
        String nonce = TestKeys.randomString(32);
        String message = timestamp + "\n" + nonce + "\n" + body + "\n";
        try {
            Signature signer = Signature.getInstance("SHA256withRSA");
            signer.initSign(platformKey);
            signer.update(message.getBytes(StandardCharsets.UTF_8));
            return new Headers(serial, Long.toString(timestamp), nonce, Base64.getEncoder().encodeToString(signer.sign()));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    public Headers sign(String body) {
        return sign(body, Instant.now().getEpochSecond());
    }

    public static Response deliver(String body, Headers headers) {
        return given().contentType("application/json")
                .header("Wechatpay-Serial", headers.serial())
                .header("Wechatpay-Timestamp", headers.timestamp())
                .header("Wechatpay-Nonce", headers.nonce())
                .header("Wechatpay-Signature", headers.signature())
                .header("Wechatpay-Signature-Type", "WECHATPAY2-SHA256-RSA2048")
                .body(body.getBytes(StandardCharsets.UTF_8))
                .post(PATH);
    }

    /** One delivery, signed now. */
    public Response deliver(String body) {
        return deliver(body, sign(body));
    }

    /** One delivery for a concurrent client, signed when it is built. */
    public HttpRequest request(String body) {
        Headers headers = sign(body);
        return HttpRequest.newBuilder(Http.uri(PATH))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .header("Wechatpay-Serial", headers.serial())
                .header("Wechatpay-Timestamp", headers.timestamp())
                .header("Wechatpay-Nonce", headers.nonce())
                .header("Wechatpay-Signature", headers.signature())
                .header("Wechatpay-Signature-Type", "WECHATPAY2-SHA256-RSA2048")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body.getBytes(StandardCharsets.UTF_8)))
                .build();
    }

    /** WeChat Pay reads 200 or 204 as "received"; anything else, or no answer, is retried. */
    public static boolean received(RetrySchedule.Attempt attempt) {
        return attempt.status() == 200 || attempt.status() == 204;
    }

    /** WeChat Pay's API for the test profile's merchant, on loopback: the query by out_trade_no. */
    public Api serve() {
        return new Api(this, TestKeys.publicKey(MERCHANT_KEY));
    }

    /**
     * {@code GET /v3/pay/transactions/out-trade-no/{out_trade_no}?mchid={mchid}} as WeChat Pay API v3
     * serves it: the request must carry the merchant's {@code WECHATPAY2-SHA256-RSA2048}
     * Authorization (SHA256withRSA over {@code GET\npath?query\ntimestamp\nnonce\n\n}, the
     * merchant's serial and mchid, a timestamp within five minutes), or it is refused 401
     * {@code SIGN_ERROR}. The answer is the transaction object (its {@code transaction_id} only once
     * paid), or 404 {@code ORDER_NOT_EXIST}, signed with the platform's key in the
     * {@code Wechatpay-*} headers as a notification is.
     */
    public static final class Api extends GatewayApi {

        private static final Pattern AUTHORIZATION =
                Pattern.compile("WECHATPAY2-SHA256-RSA2048 (.*)");
        private static final Pattern PARAMETER = Pattern.compile("(\\w+)=\"([^\"]*)\"");
        private static final String PATH = "/v3/pay/transactions/out-trade-no/";
        private static final String BILL = "/v3/bill/tradebill";
        private static final String DOWNLOAD = "/v3/billdownload/file";

        private final WeChatPaySimulator gateway;
        private final WeChatPaySimulator forger;
        private final PublicKey merchantKey;

        Api(WeChatPaySimulator gateway, PublicKey merchantKey) {
            super(PATH);
            this.gateway = gateway;
            this.forger = gateway.withPlatformKey(TestKeys.generate().getPrivate());
            this.merchantKey = merchantKey;
            route(BILL, this::billAnswer);
            route(DOWNLOAD, this::download);
        }

        @Override
        protected Supplier<HttpRequest> notification(Trade trade) {
            String body = gateway.notification(trade.orderId(), trade.tradeNo(), "SUCCESS", trade.cents());
            return () -> gateway.request(body);
        }

        @Override
        protected Optional<Asked> read(HttpExchange exchange, byte[] body) {
            URI uri = exchange.getRequestURI();
            if (!("mchid=" + MCHID).equals(uri.getRawQuery()) || !merchantSigned(exchange, body)) {
                return Optional.empty();
            }
            return Optional.of(new Asked(URLDecoder.decode(uri.getRawPath().substring(PATH.length()),
                    StandardCharsets.UTF_8)));
        }

        /**
         * Whether the request is a GET with the merchant's {@code WECHATPAY2-SHA256-RSA2048}
         * Authorization: its mchid and serial, a timestamp within five minutes, and a signature of
         * {@code GET\npath?query\ntimestamp\nnonce\nbody\n} that the merchant's key verifies.
         */
        private boolean merchantSigned(HttpExchange exchange, byte[] body) {
            URI uri = exchange.getRequestURI();
            String authorization = exchange.getRequestHeaders().getFirst("Authorization");
            if (!"GET".equals(exchange.getRequestMethod()) || authorization == null) {
                return false;
            }
            Matcher scheme = AUTHORIZATION.matcher(authorization);
            if (!scheme.matches()) {
                return false;
            }
            Map<String, String> p = new HashMap<>();
            Matcher parameter = PARAMETER.matcher(scheme.group(1));
            while (parameter.find()) {
                p.put(parameter.group(1), parameter.group(2));
            }
            String timestamp = p.getOrDefault("timestamp", "");
            if (!MCHID.equals(p.get("mchid")) || !MERCHANT_SERIAL.equals(p.get("serial_no"))
                    || !timestamp.matches("[0-9]{1,12}")
                    || Math.abs(Instant.now().getEpochSecond() - Long.parseLong(timestamp)) > 300) {
                return false;
            }
            String message = "GET\n" + uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery())
                    + "\n" + timestamp + "\n" + p.get("nonce_str") + "\n" + new String(body, StandardCharsets.UTF_8) + "\n";
            return p.get("signature") != null
                    && TestKeys.verifies(merchantKey, message.getBytes(StandardCharsets.UTF_8), p.get("signature"));
        }

        /**
         * {@code GET /v3/bill/tradebill?bill_date=&bill_type=ALL}, signed as the merchant: 200 with
         * {@code hash_type}, {@code hash_value} (SHA1 of the file) and {@code download_url}, signed
         * by the platform's key; 400 {@code NO_STATEMENT_EXIST} for a day without trades. Tampered:
         * the file served is not the one hashed.
         */
        private Answer billAnswer(HttpExchange exchange, byte[] body) {
            if (!merchantSigned(exchange, body)) {
                return refusal();
            }
            Map<String, String> query = query(exchange.getRequestURI());
            LocalDate date = LocalDate.parse(query.get("bill_date"));
            List<BillLine> lines = billLines(date);
            if (lines.isEmpty()) {
                return signed(gateway, 400, new JsonObject().put("code", "NO_STATEMENT_EXIST").put("message", "账单文件不存在"));
            }
            byte[] file = WeChatPaySimulator.tradeBill(lines);
            String hash = TestKeys.sha1Hex(file);
            if (tampered()) {
                file = new String(file, StandardCharsets.UTF_8).replaceFirst("`0\\.", "`9.").getBytes(StandardCharsets.UTF_8);
            }
            String token = offer(file);
            return signed(gateway, 200, new JsonObject().put("hash_type", "SHA1").put("hash_value", hash)
                    .put("download_url", base() + DOWNLOAD + "?token=" + token));
        }

        /** {@code GET /v3/billdownload/file?token=}, signed as the merchant: the file, not signed. */
        private Answer download(HttpExchange exchange, byte[] body) {
            if (!merchantSigned(exchange, body)) {
                return refusal();
            }
            byte[] file = take(query(exchange.getRequestURI()).get("token"));
            return file == null
                    ? signed(gateway, 400, new JsonObject().put("code", "INVALID_REQUEST").put("message", "token 已失效"))
                    : new Answer(200, Map.of("Content-Type", "application/octet-stream"), file);
        }

        private static Map<String, String> query(URI uri) {
            Map<String, String> query = new HashMap<>();
            for (String pair : String.valueOf(uri.getRawQuery()).split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    query.put(pair.substring(0, eq), URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
            return query;
        }

        @Override
        protected Answer refusal() {
            return signed(gateway, 401, new JsonObject().put("code", "SIGN_ERROR").put("message", "签名错误"));
        }

        @Override
        protected Answer answer(String orderId, Trade trade, boolean forged) {
            WeChatPaySimulator signer = forged ? forger : gateway;
            if (trade == null) {
                return signed(signer, 404, new JsonObject().put("code", "ORDER_NOT_EXIST").put("message", "订单不存在"));
            }
            JsonObject transaction;
            if (trade.state() == State.PAID) {
                transaction = transaction(orderId, trade.tradeNo(), "SUCCESS", trade.cents())
                        .put("success_time", OffsetDateTime.ofInstant(trade.paidAt(), ZoneOffset.ofHours(8))
                                .truncatedTo(ChronoUnit.SECONDS).toString());
            } else {
                transaction = transaction(orderId, "unused", trade.state() == State.UNPAID ? "NOTPAY" : "CLOSED",
                        trade.cents());
                transaction.remove("transaction_id");
                transaction.remove("payer");
                transaction.put("trade_state_desc", trade.state() == State.UNPAID ? "订单未支付" : "订单已关闭");
            }
            return signed(signer, 200, transaction);
        }

        private static Answer signed(WeChatPaySimulator signer, int status, JsonObject body) {
            String text = body.encode();
            Headers headers = signer.sign(text);
            return new Answer(status, Map.of(
                    "Content-Type", "application/json",
                    "Request-ID", UUID.randomUUID().toString(),
                    "Wechatpay-Serial", headers.serial(),
                    "Wechatpay-Timestamp", headers.timestamp(),
                    "Wechatpay-Nonce", headers.nonce(),
                    "Wechatpay-Signature", headers.signature()), text.getBytes(StandardCharsets.UTF_8));
        }
    }

    private static final DateTimeFormatter BILL_TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(GatewayApi.GATEWAY_TIME);

    /**
     * The trade bill ({@code bill_type=ALL}) as WeChat Pay API v3 writes it: the header, one line per
     * payment or refund with every value prefixed by a backtick, amounts in yuan, then the summary.
     */
    public static byte[] tradeBill(List<GatewayApi.BillLine> lines) {
        StringBuilder csv = new StringBuilder("交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,"
                + "交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,"
                + "商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注\r\n");
        long paid = 0;
        long refunded = 0;
        long fees = 0;
        for (GatewayApi.BillLine line : lines) {
            long fee = Math.round(line.cents() * 0.006);
            String amount = yuan(line.cents());
            List<String> values = line.refund()
                    ? List.of(BILL_TIME.format(line.at()), "wxd678efh567hg6787", MCHID, "0", "", line.tradeNo(), line.orderId(),
                            "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "JSAPI", "REFUND", "CMC", "CNY", "0.00", "0.00", line.refundNo(),
                            "R" + line.orderId(), amount, "0.00", "ORIGINAL", "SUCCESS", "商品", "", "-" + yuanFee(fee), "0.60%",
                            "0.00", amount, "")
                    : List.of(BILL_TIME.format(line.at()), "wxd678efh567hg6787", MCHID, "0", "", line.tradeNo(), line.orderId(),
                            "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "JSAPI", "SUCCESS", "CMC", "CNY", amount, "0.00", "0", "0", "0.00",
                            "0.00", "", "", "商品", "", yuanFee(fee), "0.60%", amount, "0.00", "");
            csv.append('`').append(String.join(",`", values)).append("\r\n");
            if (line.refund()) {
                refunded += line.cents();
            } else {
                paid += line.cents();
                fees += fee;
            }
        }
        csv.append("总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额\r\n");
        csv.append('`').append(String.join(",`", List.of(String.valueOf(lines.size()), yuan(paid), yuan(refunded), "0.00",
                yuanFee(fees), yuan(paid), yuan(refunded)))).append("\r\n");
        return csv.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String yuan(long cents) {
        return java.math.BigDecimal.valueOf(cents, 2).toPlainString();
    }

    /** Fees are written with five decimals. */
    private static String yuanFee(long cents) {
        return java.math.BigDecimal.valueOf(cents, 2).setScale(5).toPlainString();
    }

    /** Delivers {@code body} on WeChat Pay's schedule compressed {@code compression} times. */
    public List<RetrySchedule.Attempt> deliverOnSchedule(String body, long compression,
                                                         Consumer<RetrySchedule.Attempt> afterEach) {
        return SCHEDULE.deliver(() -> request(body), WeChatPaySimulator::received, compression, afterEach);
    }
}
