import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The demo's WeChat Pay: one payment notified N times at once, as WeChat Pay API v3 notifies a
 * merchant (the transaction encrypted AEAD_AES_256_GCM under the APIv3 key, each delivery signed
 * afresh with SHA256withRSA over timestamp, nonce and body). JDK only, run from source:
 *
 *   java WeChatPayNotifier.java <url> <serial> <private-key.pem> <apiv3.key> <orderId> <transactionId> <cents> <n>
 *
 * Prints one line per delivery: its HTTP status and body (WeChat Pay reads 200 with no body as
 * "received"; anything else is retried).
 */
public class WeChatPayNotifier {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    public static void main(String[] args) throws Exception {
        if (args.length != 8) {
            System.err.println("usage: WeChatPayNotifier <url> <serial> <private-key.pem> <apiv3.key> "
                    + "<orderId> <transactionId> <cents> <n>");
            System.exit(2);
        }
        URI uri = URI.create(args[0]);
        String serial = args[1];
        PrivateKey key = privateKey(Files.readString(Path.of(args[2])));
        byte[] apiV3Key = Files.readString(Path.of(args[3])).trim().getBytes(StandardCharsets.UTF_8);
        String body = notification(apiV3Key, args[4], args[5], Long.parseLong(args[6]));
        int n = Integer.parseInt(args[7]);

        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        List<CompletableFuture<HttpResponse<String>>> deliveries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            deliveries.add(http.sendAsync(signed(uri, serial, key, body), HttpResponse.BodyHandlers.ofString()));
        }
        for (CompletableFuture<HttpResponse<String>> delivery : deliveries) {
            HttpResponse<String> answer = delivery.join();
            System.out.println(answer.statusCode() + " " + answer.body().replace('\n', ' '));
        }
    }

    /** The payment-success notification: the transaction, encrypted into {@code resource}. */
    static String notification(byte[] apiV3Key, String orderId, String transactionId, long cents) throws Exception {
        String now = OffsetDateTime.now(ZoneOffset.ofHours(8)).truncatedTo(ChronoUnit.SECONDS).toString();
        String transaction = "{\"appid\":\"wxd678efh567hg6787\",\"mchid\":\"1230000109\""
                + ",\"out_trade_no\":\"" + orderId + "\",\"transaction_id\":\"" + transactionId + "\""
                + ",\"trade_type\":\"JSAPI\",\"trade_state\":\"SUCCESS\",\"trade_state_desc\":\"支付成功\""
                + ",\"bank_type\":\"CMC\",\"attach\":\"\",\"success_time\":\"" + now + "\""
                + ",\"payer\":{\"openid\":\"oUpF8uMuAJO_M2pxb1Q9zNjWeS6o\"}"
                + ",\"amount\":{\"total\":" + cents + ",\"payer_total\":" + cents
                + ",\"currency\":\"CNY\",\"payer_currency\":\"CNY\"}}";
        String nonce = random(12);
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(apiV3Key, "AES"),
                new GCMParameterSpec(128, nonce.getBytes(StandardCharsets.UTF_8)));
        cipher.updateAAD("transaction".getBytes(StandardCharsets.UTF_8));
        String ciphertext = Base64.getEncoder().encodeToString(cipher.doFinal(transaction.getBytes(StandardCharsets.UTF_8)));
        return "{\"id\":\"" + UUID.randomUUID() + "\",\"create_time\":\"" + now + "\""
                + ",\"resource_type\":\"encrypt-resource\",\"event_type\":\"TRANSACTION.SUCCESS\",\"summary\":\"支付成功\""
                + ",\"resource\":{\"original_type\":\"transaction\",\"algorithm\":\"AEAD_AES_256_GCM\""
                + ",\"ciphertext\":\"" + ciphertext + "\",\"associated_data\":\"transaction\",\"nonce\":\"" + nonce + "\"}}";
    }

    /** One delivery, signed now with a nonce of its own. */
    static HttpRequest signed(URI uri, String serial, PrivateKey key, String body) throws Exception {
        String timestamp = Long.toString(System.currentTimeMillis() / 1000);
        String nonce = random(32);
        Signature signer = Signature.getInstance("SHA256withRSA");
        signer.initSign(key);
        signer.update((timestamp + "\n" + nonce + "\n" + body + "\n").getBytes(StandardCharsets.UTF_8));
        return HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .header("Wechatpay-Serial", serial)
                .header("Wechatpay-Timestamp", timestamp)
                .header("Wechatpay-Nonce", nonce)
                .header("Wechatpay-Signature", Base64.getEncoder().encodeToString(signer.sign()))
                .header("Wechatpay-Signature-Type", "WECHATPAY2-SHA256-RSA2048")
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
                .build();
    }

    static PrivateKey privateKey(String pem) throws Exception {
        String base64 = pem.replaceAll("-----(BEGIN|END) PRIVATE KEY-----", "").replaceAll("\\s", "");
        return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
    }

    static String random(int length) {
        StringBuilder s = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            s.append(CHARS.charAt(RANDOM.nextInt(CHARS.length())));
        }
        return s.toString();
    }
}
