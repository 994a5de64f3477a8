package dev.idem.testing;

import static io.restassured.RestAssured.given;

import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.Signature;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
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

    /** Delivers {@code body} on WeChat Pay's schedule compressed {@code compression} times. */
    public List<RetrySchedule.Attempt> deliverOnSchedule(String body, long compression,
                                                         Consumer<RetrySchedule.Attempt> afterEach) {
        return SCHEDULE.deliver(() -> request(body), WeChatPaySimulator::received, compression, afterEach);
    }
}
