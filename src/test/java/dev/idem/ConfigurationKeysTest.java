package dev.idem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.coupons.CouponsConfig;
import dev.idem.ops.OpsConfig;
import dev.idem.outbox.OutboxConfig;
import dev.idem.payments.PaymentsConfig;
import dev.idem.pipeline.PipelineConfig;
import dev.idem.web.ApiConfig;
import io.quarkus.runtime.configuration.DurationConverter;
import io.quarkus.runtime.configuration.MemorySize;
import io.quarkus.runtime.configuration.MemorySizeConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import io.smallrye.config.common.MapBackedConfigSource;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The documented keys (SPEC section 6, the README's configuration table) as the service's
 * configuration roots read them, from application.properties of the prod profile and keys set as
 * system properties would be. Every {@code idem.*} key belongs to a root: one that none declares
 * stops the start.
 */
class ConfigurationKeysTest {

    /** What the extension's build step sets for the two consumer channels. */
    static final Map<String, String> EXTENSION_DEFAULTS = Map.of(
            "mp.messaging.incoming.coupon-grants.dead-letter-queue.topic",
            "${mp.messaging.incoming.coupon-grants.topic}-dlq",
            "mp.messaging.incoming.payment-callbacks.dead-letter-queue.topic",
            "${mp.messaging.incoming.payment-callbacks.topic}-dlq");

    static SmallRyeConfig config(Map<String, String> set) throws IOException {
        Map<String, String> system = new HashMap<>(Map.of("idem.callback.secret", "s3cret"));
        system.putAll(set);
        return new SmallRyeConfigBuilder()
                .addDefaultInterceptors()
                .withProfile("prod")
                .withConverter(Duration.class, 200, new DurationConverter())
                .withConverter(MemorySize.class, 200, new MemorySizeConverter())
                .withMapping(PaymentsConfig.class)
                .withMapping(CouponsConfig.class)
                .withMapping(OpsConfig.class)
                .withMapping(ApiConfig.class)
                .withMapping(OutboxConfig.class)
                .withMapping(PipelineConfig.class)
                .withSources(new PropertiesConfigSource(
                        ConfigurationKeysTest.class.getResource("/application.properties"), 250))
                .withSources(new MapBackedConfigSource("system properties", system, 400) {})
                .withSources(new MapBackedConfigSource("extension defaults", EXTENSION_DEFAULTS, Integer.MIN_VALUE + 1) {})
                .build();
    }

    /** The roots, read from one configuration. */
    record Roots(PaymentsConfig payments, CouponsConfig coupons, OpsConfig ops, ApiConfig api, OutboxConfig outbox,
                 PipelineConfig pipeline) {
        static Roots of(SmallRyeConfig config) {
            return new Roots(config.getConfigMapping(PaymentsConfig.class), config.getConfigMapping(CouponsConfig.class),
                    config.getConfigMapping(OpsConfig.class), config.getConfigMapping(ApiConfig.class),
                    config.getConfigMapping(OutboxConfig.class), config.getConfigMapping(PipelineConfig.class));
        }
    }

    /** A documented key: what it reads as by default, the value a test sets, and what that reads as. */
    record Key(String name, Object byDefault, String set, Object whenSet, Function<Roots, Object> read) {}

    static final List<Key> KEYS = List.of(
            new Key("idem.callback.secret", "s3cret", "other-secret", "other-secret", r -> r.payments().callback().secret()),
            new Key("idem.callback.previous-secrets", Optional.empty(), "old-1,old-2", Optional.of(List.of("old-1", "old-2")),
                    r -> r.payments().callback().previousSecrets()),
            new Key("idem.callback.tolerance", Duration.ofSeconds(300), "120s", Duration.ofSeconds(120),
                    r -> r.payments().callback().tolerance()),
            new Key("idem.gateways.wechatpay.api-v3-key", Optional.empty(), "k".repeat(32), Optional.of("k".repeat(32)),
                    r -> r.payments().gateways().wechatpay().apiV3Key()),
            new Key("idem.gateways.wechatpay.platform-keys.\"PUB_KEY_ID_1\"", Map.of(), "pem", Map.of("PUB_KEY_ID_1", "pem"),
                    r -> r.payments().gateways().wechatpay().platformKeys()),
            new Key("idem.gateways.alipay.app-id", Optional.empty(), "2021", Optional.of("2021"),
                    r -> r.payments().gateways().alipay().appId()),
            new Key("idem.gateways.alipay.public-key", Optional.empty(), "pem", Optional.of("pem"),
                    r -> r.payments().gateways().alipay().publicKey()),
            new Key("idem.gateways.wechatpay.api-base", URI.create("https://api.mch.weixin.qq.com"),
                    "http://127.0.0.1:8091", URI.create("http://127.0.0.1:8091"), r -> r.payments().gateways().wechatpay().merchant().apiBase()),
            new Key("idem.gateways.wechatpay.mchid", Optional.empty(), "1230000109", Optional.of("1230000109"),
                    r -> r.payments().gateways().wechatpay().merchant().mchid()),
            new Key("idem.gateways.wechatpay.merchant-serial", Optional.empty(), "3775B6", Optional.of("3775B6"),
                    r -> r.payments().gateways().wechatpay().merchant().merchantSerial()),
            new Key("idem.gateways.wechatpay.merchant-private-key", Optional.empty(), "pem", Optional.of("pem"),
                    r -> r.payments().gateways().wechatpay().merchant().merchantPrivateKey()),
            new Key("idem.gateways.alipay.gateway-url", URI.create("https://openapi.alipay.com/gateway.do"),
                    "http://127.0.0.1:8092/gateway.do", URI.create("http://127.0.0.1:8092/gateway.do"),
                    r -> r.payments().gateways().alipay().app().gatewayUrl()),
            new Key("idem.gateways.alipay.app-private-key", Optional.empty(), "pem", Optional.of("pem"),
                    r -> r.payments().gateways().alipay().app().appPrivateKey()),
            new Key("idem.gateways.wechatpay.query.enabled", Optional.empty(), "false", Optional.of(false),
                    r -> r.payments().gateways().wechatpay().merchant().query().enabled()),
            new Key("idem.gateways.wechatpay.query.first-delay", Duration.ofMinutes(5), "1m", Duration.ofMinutes(1),
                    r -> r.payments().gateways().wechatpay().merchant().query().firstDelay()),
            new Key("idem.gateways.wechatpay.query.max-interval", Duration.ofMinutes(30), "10m", Duration.ofMinutes(10),
                    r -> r.payments().gateways().wechatpay().merchant().query().maxInterval()),
            new Key("idem.gateways.wechatpay.query.rate", 20, "5", 5, r -> r.payments().gateways().wechatpay().merchant().query().rate()),
            new Key("idem.gateways.alipay.query.enabled", Optional.empty(), "false", Optional.of(false),
                    r -> r.payments().gateways().alipay().app().query().enabled()),
            new Key("idem.gateways.alipay.query.first-delay", Duration.ofMinutes(5), "2m", Duration.ofMinutes(2),
                    r -> r.payments().gateways().alipay().app().query().firstDelay()),
            new Key("idem.gateways.alipay.query.max-interval", Duration.ofMinutes(30), "20m", Duration.ofMinutes(20),
                    r -> r.payments().gateways().alipay().app().query().maxInterval()),
            new Key("idem.gateways.alipay.query.rate", 20, "7", 7, r -> r.payments().gateways().alipay().app().query().rate()),
            new Key("idem.orders.expiry", Duration.ofHours(2), "3h", Duration.ofHours(3), r -> r.payments().orders().expiry()),
            new Key("idem.http.max-request-target-length", 4096, "2048", 2048, r -> r.api().http().maxRequestTargetLength()),
            new Key("idem.http.max-headers-size", 20L * 1024, "10K", 10L * 1024,
                    r -> r.api().http().maxHeadersSize().asLongValue()),
            new Key("idem.admin.token", Optional.empty(), "admin", Optional.of("admin"), r -> r.ops().admin().token()),
            new Key("idem.campaign.paid-coupon-template", Optional.of("PAY-5OFF"), "", Optional.empty(),
                    r -> r.coupons().campaign().paidCouponTemplate()),
            new Key("idem.campaign.paid-coupon-issuer", CouponsConfig.Campaign.Issuer.LOCAL, "external",
                    CouponsConfig.Campaign.Issuer.EXTERNAL, r -> r.coupons().campaign().paidCouponIssuer()),
            new Key("idem.coupon-issuer.url", Optional.empty(), "http://127.0.0.1:8090/coupons",
                    Optional.of(URI.create("http://127.0.0.1:8090/coupons")), r -> r.coupons().couponIssuer().url()),
            new Key("idem.coupon-issuer.timeout", Duration.ofSeconds(5), "3s", Duration.ofSeconds(3),
                    r -> r.coupons().couponIssuer().timeout()),
            new Key("idem.token.ttl", Duration.ofMinutes(30), "5m", Duration.ofMinutes(5), r -> r.api().token().ttl()),
            // the pipeline's order-submit scope keeps its keys and answers this long, in Redis and in Postgres
            new Key("idem.key.retention", List.of(Duration.ofHours(24), Duration.ofHours(24)), "2h",
                    List.of(Duration.ofHours(2), Duration.ofHours(2)),
                    r -> List.of(r.pipeline().redisTtl("order-submit"), r.pipeline().retention("order-submit"))),
            new Key("idem.dedup.retention", Duration.ofDays(7), "3d", Duration.ofDays(3), r -> r.pipeline().retention()),
            new Key("idem.outbox.batch-size", 200, "50", 50, r -> r.outbox().batchSize()),
            new Key("idem.outbox.poll-interval", Duration.ofSeconds(2), "1s", Duration.ofSeconds(1),
                    r -> r.outbox().pollInterval()),
            new Key("idem.outbox.relay-enabled", true, "false", false, r -> r.outbox().relayEnabled()),
            new Key("idem.archive.interval", "10m", "1m", "1m", r -> r.pipeline().archive().interval()),
            new Key("idem.archive.batch-size", 500, "100", 100, r -> r.pipeline().archive().batchSize()),
            new Key("idem.archive.max-batches", 200, "20", 20, r -> r.pipeline().archive().maxBatches()),
            new Key("idem.archive.outbox-retention", Duration.ofDays(7), "5m", Duration.ofMinutes(5),
                    r -> r.ops().archive().outboxRetention()),
            new Key("idem.reconciliation.grace", Duration.ofSeconds(60), "0s", Duration.ZERO,
                    r -> r.ops().reconciliation().grace()),
            new Key("idem.reconciliation.interval", Duration.ofSeconds(60), "30s", Duration.ofSeconds(30),
                    r -> r.ops().reconciliation().interval()),
            new Key("idem.console.sample-interval", Duration.ofSeconds(10), "2s", Duration.ofSeconds(2),
                    r -> r.ops().console().sampleInterval()),
            new Key("idem.console.history", Duration.ofHours(1), "10m", Duration.ofMinutes(10),
                    r -> r.ops().console().history()),
            new Key("idem.dead-letters.default-limit", 100, "10", 10, r -> r.ops().deadLetters().defaultLimit()),
            new Key("idem.dead-letters.max-limit", 1000, "20", 20, r -> r.ops().deadLetters().maxLimit()),
            new Key("idem.dead-letters.read-timeout", Duration.ofSeconds(30), "5s", Duration.ofSeconds(5),
                    r -> r.ops().deadLetters().readTimeout()),
            new Key("idem.dead-letters.batch-size", 500, "7", 7, r -> r.ops().deadLetters().batchSize()));

    @Test
    void theDocumentedDefaults() throws IOException {
        SmallRyeConfig config = config(Map.of());
        Roots roots = Roots.of(config);
        for (Key key : KEYS) {
            assertEquals(key.byDefault(), key.read().apply(roots), key.name());
        }
        assertEquals(Duration.ofHours(26), roots.pipeline().redisTtl("payment-callback"));
        OpsConfig.DeadLetters.Channel grants = roots.ops().deadLetters().channels().get("coupon-grants");
        assertEquals(List.of("coupon-grants", "coupon-grants-dlq"), List.of(grants.topic(), grants.deadLetterTopic()));
        // what the schedules' expressions read
        assertEquals("10m", config.getValue("idem.pipeline.archive.interval", String.class));
        assertEquals("60s", config.getValue("idem.reconciliation.interval", String.class));
        assertEquals("10s", config.getValue("idem.console.sample-interval", String.class));
        assertEquals("2s", config.getValue("idem.outbox.poll-interval", String.class));
    }

    @Test
    void everyDocumentedKeyIsReadUnderItsOwnName() throws IOException {
        Map<String, String> set = new HashMap<>();
        KEYS.forEach(key -> set.put(key.name(), key.set()));
        SmallRyeConfig config = config(set);
        Roots roots = Roots.of(config);
        for (Key key : KEYS) {
            assertEquals(key.whenSet(), key.read().apply(roots), key.name());
        }
        assertEquals("1m", config.getValue("idem.pipeline.archive.interval", String.class));
    }

    @Test
    void anUndeclaredKeyStopsTheStart() {
        Exception refused = assertThrows(Exception.class, () -> config(Map.of("idem.reconciliation.graze", "0s")));
        assertTrue(refused.getMessage().contains("idem.reconciliation.graze"), refused.getMessage());
    }
}
