package dev.idem.payments.alipay;

import dev.idem.orders.PaymentGateway;
import dev.idem.payments.Notice;
import dev.idem.payments.Rsa;
import dev.idem.payments.query.GatewayHttp;
import dev.idem.payments.PaymentsConfig;
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
import java.time.Clock;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Alipay's {@code alipay.trade.query}: the common parameters and {@code biz_content}
 * {@code {"out_trade_no":...}} POSTed as a form to the gateway, signed RSA2 with the application's
 * private key (every parameter but {@code sign}, empty ones left out, sorted, {@code k=v&k=v}); the
 * answer's {@code sign} is verified with Alipay's public key over the exact text of
 * {@code alipay_trade_query_response}, and a paid trade is read as a notification's is.
 */
@Startup
@Singleton
public class AlipayQuery extends GatewayQuery {

    static final String METHOD = "alipay.trade.query";
    static final String RESPONSE = "alipay_trade_query_response";
    private static final String PREFIX = "idem.gateways.alipay";
    private static final DateTimeFormatter TIMESTAMP =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneId.of("Asia/Shanghai"));

    private final Optional<AlipayNotifications.Keys> alipay;
    private final Optional<PrivateKey> appKey;
    private final URI gatewayUrl;
    private final StrictJson json;
    private final GatewayHttp http;
    private final Clock clock;

    @Inject
    AlipayQuery(PaymentsConfig config, AlipayNotifications notifications, StrictJson json, GatewayHttp http,
                Clock clock) {
        this(config.gateways().alipay().app(), notifications.keys(), config.gateways().alipay().app().appPrivateKey().filter(key -> !key.isBlank())
                .map(key -> Rsa.privateKey(PREFIX + ".app-private-key", key)), json, http, clock);
    }

    private AlipayQuery(PaymentsConfig.AlipayApp settings, Optional<AlipayNotifications.Keys> alipay,
                        Optional<PrivateKey> appKey, StrictJson json, GatewayHttp http, Clock clock) {
        super(PaymentGateway.ALIPAY, settings.query(), PREFIX, alipay.isPresent(), appKey.isPresent(),
                PREFIX + ".app-private-key");
        this.alipay = alipay;
        this.appKey = appKey;
        this.gatewayUrl = settings.gatewayUrl();
        this.json = json;
        this.http = http;
        this.clock = clock;
    }

    @Override
    public Uni<QueryAnswer> ask(String orderId) {
        return call(METHOD, new JsonObject().put("out_trade_no", orderId))
                .map(answer -> answer.status() == 200
                        ? read(orderId, answer.body())
                        : new QueryAnswer.Failed("Alipay answered HTTP " + answer.status(),
                                answer.status() == 429 || answer.status() >= 500));
    }

    /** One open-platform API {@code method} with its {@code biz_content}, signed as the application. */
    Uni<GatewayHttp.Answer> call(String method, JsonObject bizContent) {
        byte[] form = form(signed(parameters(method, bizContent))).getBytes(StandardCharsets.US_ASCII);
        Map<String, String> headers = Map.of("Content-Type", "application/x-www-form-urlencoded;charset=utf-8");
        return http.send(HttpMethod.POST, gatewayUrl, headers, form);
    }

    /** Whether {@code response} carries a sign, and Alipay's key verifies it. */
    boolean signedByAlipay(AlipayResponse response) {
        return response.sign().isPresent()
                && Rsa.verifies(alipay.orElseThrow().alipayKey(), response.content(), response.sign().get());
    }

    /** Whether the gateway is on: its notifications' keys are set. */
    boolean on() {
        return alipay.isPresent();
    }

    /** Whether the gateway is on and the application's key is set. */
    boolean canAsk() {
        return alipay.isPresent() && appKey.isPresent();
    }

    private SortedMap<String, String> parameters(String method, JsonObject bizContent) {
        SortedMap<String, String> p = new TreeMap<>();
        p.put("app_id", alipay.orElseThrow().appId());
        p.put("method", method);
        p.put("format", "JSON");
        p.put("charset", "utf-8");
        p.put("sign_type", "RSA2");
        p.put("timestamp", TIMESTAMP.format(clock.instant()));
        p.put("version", "1.0");
        p.put("biz_content", bizContent.encode());
        return p;
    }

    /** The parameters with their {@code sign}. */
    private SortedMap<String, String> signed(SortedMap<String, String> parameters) {
        SortedMap<String, String> signed = new TreeMap<>(parameters);
        signed.put("sign", Rsa.sign(appKey.orElseThrow(), signedContent(parameters).getBytes(StandardCharsets.UTF_8)));
        return signed;
    }

    /** What a request's {@code sign} covers: every parameter but {@code sign}, empty ones left out, sorted. */
    static String signedContent(SortedMap<String, String> parameters) {
        return parameters.entrySet().stream()
                .filter(p -> !"sign".equals(p.getKey()) && p.getValue() != null && !p.getValue().isEmpty())
                .map(p -> p.getKey() + "=" + p.getValue())
                .collect(Collectors.joining("&"));
    }

    private static String form(SortedMap<String, String> parameters) {
        return parameters.entrySet().stream()
                .map(p -> URLEncoder.encode(p.getKey(), StandardCharsets.UTF_8) + "="
                        + URLEncoder.encode(p.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
    }

    /**
     * The answer, once its sign verified. Only "no such trade" is taken unsigned (Alipay may leave
     * a business error unsigned, and it changes nothing); everything else needs a sign that verifies.
     */
    QueryAnswer read(String orderId, byte[] body) {
        Optional<AlipayResponse> response = AlipayResponse.read(body, RESPONSE);
        if (response.isEmpty()) {
            return new QueryAnswer.Failed("the answer has no " + RESPONSE, false);
        }
        Optional<String> sign = response.get().sign();
        if (sign.isPresent() && !Rsa.verifies(alipay.orElseThrow().alipayKey(), response.get().content(), sign.get())) {
            return new QueryAnswer.Failed("the answer's sign does not verify", false);
        }
        Parsed<AlipayTradeQuery> parsed = json.read(response.get().content(), AlipayTradeQuery.class,
                read -> Optional.empty());
        if (parsed instanceof Parsed.Invalid<AlipayTradeQuery> invalid) {
            return new QueryAnswer.Failed("the answer does not read: " + invalid.detail(), false);
        }
        AlipayTradeQuery trade = ((Parsed.Valid<AlipayTradeQuery>) parsed).value();
        if ("40004".equals(trade.code()) && "ACQ.TRADE_NOT_EXIST".equals(trade.subCode())) {
            return new QueryAnswer.NotFound();
        }
        if (sign.isEmpty()) {
            return new QueryAnswer.Failed("the answer is not signed", false);
        }
        if (!"10000".equals(trade.code())) {
            return new QueryAnswer.Failed("Alipay answered " + trade.code() + " " + trade.subCode(),
                    "20000".equals(trade.code()) || "ACQ.SYSTEM_ERROR".equals(trade.subCode()));
        }
        if (!orderId.equals(trade.outTradeNo())) {
            return new QueryAnswer.Failed("the answer is about another order", false);
        }
        String status = String.valueOf(trade.tradeStatus());
        switch (status) {
            case "TRADE_SUCCESS", "TRADE_FINISHED" -> {
                Notice notice = AlipayNotifications.trade(trade::asNotified);
                return notice instanceof Notice.Payment payment
                        ? new QueryAnswer.Paid(payment.callback())
                        : new QueryAnswer.Failed("the paid trade does not read: " + notice, false);
            }
            case "WAIT_BUYER_PAY" -> {
                return new QueryAnswer.Unpaid(status);
            }
            case "TRADE_CLOSED" -> {
                return new QueryAnswer.Closed(status);
            }
            default -> {
                return new QueryAnswer.Failed("trade_status " + status + " is not acted on", false);
            }
        }
    }
}
