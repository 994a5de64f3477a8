package dev.idem.payments.wechatpay;

import dev.idem.orders.PaymentGateway;
import dev.idem.payments.Notice;
import dev.idem.payments.PaymentsConfig;
import dev.idem.payments.Rsa;
import dev.idem.payments.query.GatewayHttp;
import dev.idem.payments.query.GatewayQuery;
import dev.idem.payments.query.QueryAnswer;
import dev.idem.pipeline.StrictJson;
import dev.idem.pipeline.StrictJson.Parsed;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * WeChat Pay API v3's query by the merchant's order number:
 * {@code GET {api-base}/v3/pay/transactions/out-trade-no/{out_trade_no}?mchid={mchid}}, signed with
 * the merchant's private key in the {@code WECHATPAY2-SHA256-RSA2048} Authorization header; the
 * answer's signature is verified with the platform's key, as a notification's is. The answer is
 * the transaction object a notification carries, read by the same {@link WeChatPayTransaction}.
 */
@Startup
@Singleton
public class WeChatPayQuery extends GatewayQuery {

    static final String PATH = "/v3/pay/transactions/out-trade-no/";
    static final String SCHEME = "WECHATPAY2-SHA256-RSA2048";
    private static final String PREFIX = "idem.gateways.wechatpay";
    private static final String KEYS = PREFIX + ".mchid, .merchant-serial and .merchant-private-key";
    private static final String NONCE_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

    /** Who asks: the merchant, and the key (by its certificate's serial) that signs. */
    record Merchant(String mchid, String serial, PrivateKey key) {}

    private final Optional<WeChatPayKeys> platform;
    private final Optional<Merchant> merchant;
    private final URI apiBase;
    private final WeChatPaySignature signature;
    private final StrictJson json;
    private final GatewayHttp http;
    private final Clock clock;
    private final SecureRandom random = new SecureRandom();

    @Inject
    WeChatPayQuery(PaymentsConfig config, WeChatPayNotifications notifications,
                   StrictJson json, GatewayHttp http, Clock clock) {
        this(config.gateways().wechatpay().merchant(), notifications.keys(),
                merchant(config.gateways().wechatpay().merchant()), config, json, http, clock);
    }

    private WeChatPayQuery(PaymentsConfig.WeChatPayMerchant wechatpay, Optional<WeChatPayKeys> platform,
                           Optional<Merchant> merchant, PaymentsConfig config, StrictJson json, GatewayHttp http,
                           Clock clock) {
        super(PaymentGateway.WECHATPAY, wechatpay.query(), PREFIX, platform.isPresent(), merchant.isPresent(), KEYS);
        this.platform = platform;
        this.merchant = merchant;
        this.apiBase = wechatpay.apiBase();
        this.signature = new WeChatPaySignature(config.callback().tolerance(), clock);
        this.json = json;
        this.http = http;
        this.clock = clock;
    }

    /** Empty when none of the three is set; some but not all stops the start. */
    private static Optional<Merchant> merchant(PaymentsConfig.WeChatPayMerchant config) {
        Optional<String> mchid = config.mchid().map(String::trim).filter(s -> !s.isEmpty());
        Optional<String> serial = config.merchantSerial().map(String::trim).filter(s -> !s.isEmpty());
        Optional<String> key = config.merchantPrivateKey().filter(s -> !s.isBlank());
        int set = (mchid.isPresent() ? 1 : 0) + (serial.isPresent() ? 1 : 0) + (key.isPresent() ? 1 : 0);
        if (set == 0) {
            return Optional.empty();
        }
        if (set < 3) {
            throw new IllegalStateException("WeChat Pay's query needs all of " + KEYS + "; set all three, or none");
        }
        return Optional.of(new Merchant(mchid.get(), serial.get(),
                Rsa.privateKey(PREFIX + ".merchant-private-key", key.get())));
    }

    @Override
    public Uni<QueryAnswer> ask(String orderId) {
        return get(PATH + encode(orderId) + "?mchid=" + encode(merchant.orElseThrow().mchid()))
                .map(answer -> read(orderId, answer.status(), answer::header, answer.body()));
    }

    /**
     * A GET of the merchant API at {@code pathAndQuery} (below {@code api-base}), signed as the
     * merchant. The answer comes as received: {@link #verify} says whether WeChat Pay signed it.
     */
    Uni<GatewayHttp.Answer> get(String pathAndQuery) {
        String base = apiBase.getRawPath() == null ? "" : apiBase.getRawPath().replaceAll("/+$", "");
        return getSigned(apiBase.resolve(base + pathAndQuery));
    }

    /** A GET of {@code url}, an address WeChat Pay gave (a bill's download), signed as the merchant. */
    Uni<GatewayHttp.Answer> getSigned(URI url) {
        String pathAndQuery = url.getRawPath() + (url.getRawQuery() == null ? "" : "?" + url.getRawQuery());
        Map<String, String> headers = Map.of(
                "Authorization", authorization(merchant.orElseThrow(), "GET", pathAndQuery,
                        clock.instant().getEpochSecond(), nonce()),
                "Accept", "application/json");
        return http.send(HttpMethod.GET, url, headers, null);
    }

    /** Whether WeChat Pay signed {@code answer}, with the platform keys that verify its notifications. */
    WeChatPaySignature.Check verify(GatewayHttp.Answer answer) {
        return verify(answer::header, answer.body());
    }

    /** Whether a download address is WeChat Pay's own: the API's scheme, host and port. */
    boolean sameApi(URI url) {
        return apiBase.getScheme().equalsIgnoreCase(String.valueOf(url.getScheme()))
                && apiBase.getHost().equalsIgnoreCase(String.valueOf(url.getHost()))
                && apiBase.getPort() == url.getPort();
    }

    /** Whether the gateway is on: its notifications' keys are set. */
    boolean on() {
        return platform.isPresent();
    }

    /** Whether the gateway is on and the merchant's keys are set. */
    boolean canAsk() {
        return platform.isPresent() && merchant.isPresent();
    }

    /**
     * The Authorization header: {@code signature} is the base64 SHA256withRSA of
     * {@code METHOD\nPATH?QUERY\ntimestamp\nnonce\nbody\n} (the body empty for a GET).
     */
    static String authorization(Merchant merchant, String method, String pathAndQuery, long timestamp, String nonce) {
        String message = method + "\n" + pathAndQuery + "\n" + timestamp + "\n" + nonce + "\n" + "" + "\n";
        String signed = Rsa.sign(merchant.key(), message.getBytes(StandardCharsets.UTF_8));
        return SCHEME + " mchid=\"" + merchant.mchid() + "\",nonce_str=\"" + nonce + "\",signature=\"" + signed
                + "\",timestamp=\"" + timestamp + "\",serial_no=\"" + merchant.serial() + "\"";
    }

    /**
     * The answer, read once its signature verified: 200 with the transaction, or 404
     * {@code ORDER_NOT_EXIST}. A 404 that carries no signature is taken as it is, since it changes
     * nothing; one whose signature does not verify is not.
     */
    QueryAnswer read(String orderId, int status, Function<String, String> header, byte[] body) {
        boolean signed = header.apply("Wechatpay-Signature") != null;
        if (status == 200 || status == 404 && signed) {
            WeChatPaySignature.Check check = verify(header, body);
            if (check != WeChatPaySignature.Check.VALID) {
                return new QueryAnswer.Failed("the answer (" + status + ") is not WeChat Pay's: " + check.message, false);
            }
        }
        if (status == 200) {
            return transaction(orderId, body);
        }
        if (status == 404) {
            String code = code(body);
            return "ORDER_NOT_EXIST".equals(code)
                    ? new QueryAnswer.NotFound()
                    : new QueryAnswer.Failed("WeChat Pay answered 404 " + code, false);
        }
        return new QueryAnswer.Failed("WeChat Pay answered " + status + " " + code(body), status == 429 || status >= 500);
    }

    private WeChatPaySignature.Check verify(Function<String, String> header, byte[] body) {
        return signature.verify(platform.orElseThrow(), header.apply("Wechatpay-Serial"),
                header.apply("Wechatpay-Timestamp"), header.apply("Wechatpay-Nonce"),
                header.apply("Wechatpay-Signature"), body);
    }

    private QueryAnswer transaction(String orderId, byte[] body) {
        Parsed<WeChatPayTransaction> parsed = json.read(body, WeChatPayTransaction.class, read -> Optional.empty());
        if (parsed instanceof Parsed.Invalid<WeChatPayTransaction> invalid) {
            return new QueryAnswer.Failed("the answer does not read: " + invalid.detail(), false);
        }
        WeChatPayTransaction transaction = ((Parsed.Valid<WeChatPayTransaction>) parsed).value();
        if (!orderId.equals(transaction.outTradeNo())) {
            return new QueryAnswer.Failed("the answer is about another order", false);
        }
        String state = String.valueOf(transaction.tradeState());
        switch (state) {
            case "SUCCESS" -> {
                Notice notice = transaction.toNotice();
                return notice instanceof Notice.Payment payment
                        ? new QueryAnswer.Paid(payment.callback())
                        : new QueryAnswer.Failed("the paid transaction does not read: " + notice, false);
            }
            case "NOTPAY", "USERPAYING" -> {
                return new QueryAnswer.Unpaid(state);
            }
            case "CLOSED", "REVOKED", "PAYERROR" -> {
                return new QueryAnswer.Closed(state);
            }
            default -> {
                return new QueryAnswer.Failed("trade_state " + state + " is not acted on", false);
            }
        }
    }

    static String code(byte[] body) {
        try {
            return new JsonObject(new String(body, StandardCharsets.UTF_8)).getString("code");
        } catch (RuntimeException notJson) {
            return null;
        }
    }

    private String nonce() {
        StringBuilder nonce = new StringBuilder(32);
        for (int i = 0; i < 32; i++) {
            nonce.append(NONCE_CHARACTERS.charAt(random.nextInt(NONCE_CHARACTERS.length())));
        }
        return nonce.toString();
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
