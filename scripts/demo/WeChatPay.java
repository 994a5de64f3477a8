import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The demo's WeChat Pay (API v3), JDK only, run from source.
 * {@code notify <url> <serial> <private-key.pem> <apiv3.key> <orderId> <transactionId> <cents> <n>}: one
 * payment notified n times at once (the transaction AEAD_AES_256_GCM under the APIv3 key, each delivery
 * signed afresh, SHA256withRSA); one line per delivery: its status and body (200 with none: "received").
 * {@code serve <port> <serial> <private-key.pem> <merchant-public.pem> <mchid> <merchant-serial> <orderId>
 * <transactionId> <cents>}: the query by out_trade_no on loopback until killed; the merchant's
 * WECHATPAY2-SHA256-RSA2048 Authorization required (else 401 SIGN_ERROR), the order answered paid, any
 * other ORDER_NOT_EXIST, every answer signed with the platform key; one line per query.
 */
public class WeChatPay {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    public static void main(String[] args) throws Exception {
        if (args.length == 10 && args[0].equals("serve")) {
            serve(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length != 9 || !args[0].equals("notify")) {
            System.err.println("usage: WeChatPay notify <url> <serial> <private-key.pem> <apiv3.key> <orderId> "
                    + "<transactionId> <cents> <n>\n       WeChatPay serve <port> <serial> <private-key.pem> "
                    + "<merchant-public.pem> <mchid> <merchant-serial> <orderId> <transactionId> <cents>");
            System.exit(2);
        }
        args = Arrays.copyOfRange(args, 1, args.length);
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
        deliveries.forEach(d -> System.out.println(d.join().statusCode() + " " + d.join().body().replace('\n', ' ')));
    }

    /** The paid transaction, as a notification carries it and the query answers it. */
    static String transaction(String mchid, String orderId, String transactionId, long cents) {
        String now = OffsetDateTime.now(ZoneOffset.ofHours(8)).truncatedTo(ChronoUnit.SECONDS).toString();
        return "{\"appid\":\"wxd678efh567hg6787\",\"mchid\":\"" + mchid + "\""
                + ",\"out_trade_no\":\"" + orderId + "\",\"transaction_id\":\"" + transactionId + "\""
                + ",\"trade_type\":\"JSAPI\",\"trade_state\":\"SUCCESS\",\"trade_state_desc\":\"支付成功\""
                + ",\"bank_type\":\"CMC\",\"attach\":\"\",\"success_time\":\"" + now + "\""
                + ",\"payer\":{\"openid\":\"oUpF8uMuAJO_M2pxb1Q9zNjWeS6o\"}"
                + ",\"amount\":{\"total\":" + cents + ",\"payer_total\":" + cents
                + ",\"currency\":\"CNY\",\"payer_currency\":\"CNY\"}}";
    }

    /** The payment-success notification: the transaction, encrypted into {@code resource}. */
    static String notification(byte[] apiV3Key, String orderId, String transactionId, long cents) throws Exception {
        String now = OffsetDateTime.now(ZoneOffset.ofHours(8)).truncatedTo(ChronoUnit.SECONDS).toString();
        String transaction = transaction("1230000109", orderId, transactionId, cents);
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
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .header("Wechatpay-Signature-Type", "WECHATPAY2-SHA256-RSA2048")
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        platformHeaders(serial, key, body).forEach(request::header);
        return request.build();
    }

    /** The Wechatpay-* headers that sign {@code body} now, as WeChat Pay signs what it sends. */
    static Map<String, String> platformHeaders(String serial, PrivateKey key, String body) throws Exception {
        String timestamp = Long.toString(System.currentTimeMillis() / 1000);
        String nonce = random(32);
        Signature signer = Signature.getInstance("SHA256withRSA");
        signer.initSign(key);
        signer.update((timestamp + "\n" + nonce + "\n" + body + "\n").getBytes(StandardCharsets.UTF_8));
        return Map.of("Wechatpay-Serial", serial, "Wechatpay-Timestamp", timestamp, "Wechatpay-Nonce", nonce,
                "Wechatpay-Signature", Base64.getEncoder().encodeToString(signer.sign()));
    }

    /** The query by out_trade_no, on loopback, until the process is killed. */
    static void serve(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String serial = args[1];
        PrivateKey key = privateKey(Files.readString(Path.of(args[2])));
        PublicKey merchant = KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(Base64.getDecoder()
                .decode(Files.readString(Path.of(args[3])).replaceAll("-----(BEGIN|END) PUBLIC KEY-----", "")
                        .replaceAll("\\s", ""))));
        String mchid = args[4];
        String merchantSerial = args[5];
        String orderId = args[6];
        String paid = transaction(mchid, orderId, args[7], Long.parseLong(args[8]));
        String path = "/v3/pay/transactions/out-trade-no/";
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        server.createContext(path, exchange -> {
            try (exchange) {
                URI uri = exchange.getRequestURI();
                String asked = URLDecoder.decode(uri.getRawPath().substring(path.length()), StandardCharsets.UTF_8);
                boolean merchantSigned = merchantSigned(exchange.getRequestHeaders().getFirst("Authorization"),
                        uri.getRawPath() + "?" + uri.getRawQuery(), mchid, merchantSerial, merchant);
                int status = !merchantSigned ? 401 : asked.equals(orderId) ? 200 : 404;
                String body = switch (status) {
                    case 200 -> paid;
                    case 401 -> "{\"code\":\"SIGN_ERROR\",\"message\":\"签名错误\"}";
                    default -> "{\"code\":\"ORDER_NOT_EXIST\",\"message\":\"订单不存在\"}";
                };
                platformHeaders(serial, key, body).forEach(exchange.getResponseHeaders()::set);
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(status, bytes.length);
                exchange.getResponseBody().write(bytes);
                System.out.println(status + " " + asked);
            } catch (Exception e) {
                System.out.println("500 " + e);
            }
        });
        server.start();
        System.out.println("listening " + port);
    }

    /** Whether {@code authorization} signs {@code GET\npathAndQuery\ntimestamp\nnonce\n\n} as the merchant. */
    static boolean merchantSigned(String authorization, String pathAndQuery, String mchid, String serial, PublicKey key)
            throws Exception {
        if (authorization == null || !authorization.startsWith("WECHATPAY2-SHA256-RSA2048 ")) {
            return false;
        }
        Map<String, String> p = new HashMap<>();
        Matcher parameter = Pattern.compile("(\\w+)=\"([^\"]*)\"").matcher(authorization);
        while (parameter.find()) {
            p.put(parameter.group(1), parameter.group(2));
        }
        if (!mchid.equals(p.get("mchid")) || !serial.equals(p.get("serial_no")) || p.get("signature") == null) {
            return false;
        }
        Signature verifier = Signature.getInstance("SHA256withRSA");
        verifier.initVerify(key);
        verifier.update(("GET\n" + pathAndQuery + "\n" + p.get("timestamp") + "\n" + p.get("nonce_str") + "\n\n")
                .getBytes(StandardCharsets.UTF_8));
        return verifier.verify(Base64.getDecoder().decode(p.get("signature")));
    }

    static PrivateKey privateKey(String pem) throws Exception {
        String base64 = pem.replaceAll("-----(BEGIN|END) PRIVATE KEY-----", "").replaceAll("\\s", "");
        return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
    }

    static String random(int length) {
        return RANDOM.ints(length, 0, CHARS.length()).mapToObj(i -> String.valueOf(CHARS.charAt(i))).collect(Collectors.joining());
    }
}
