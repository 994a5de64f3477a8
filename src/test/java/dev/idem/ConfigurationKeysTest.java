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

    @Test
    void theDocumentedDefaults() throws IOException {
        SmallRyeConfig config = config(Map.of());
        PaymentsConfig payments = config.getConfigMapping(PaymentsConfig.class);
        CouponsConfig coupons = config.getConfigMapping(CouponsConfig.class);
        OpsConfig ops = config.getConfigMapping(OpsConfig.class);
        ApiConfig api = config.getConfigMapping(ApiConfig.class);
        OutboxConfig outbox = config.getConfigMapping(OutboxConfig.class);
        PipelineConfig pipeline = config.getConfigMapping(PipelineConfig.class);

        assertEquals(Duration.ofSeconds(300), payments.callback().tolerance());
        assertEquals(Optional.empty(), payments.callback().previousSecrets());
        assertEquals(Optional.empty(), payments.gateways().wechatpay().apiV3Key());
        assertEquals(Map.of(), payments.gateways().wechatpay().platformKeys());
        assertEquals(Optional.empty(), payments.gateways().alipay().appId());
        assertEquals(Optional.of("PAY-5OFF"), coupons.campaign().paidCouponTemplate());
        assertEquals(CouponsConfig.Campaign.Issuer.LOCAL, coupons.campaign().paidCouponIssuer());
        assertEquals(Duration.ofSeconds(5), coupons.couponIssuer().timeout());
        assertEquals(Optional.empty(), ops.admin().token());
        assertEquals(Duration.ofDays(7), ops.archive().outboxRetention());
        assertEquals(Duration.ofSeconds(60), ops.reconciliation().grace());
        assertEquals(Duration.ofSeconds(60), ops.reconciliation().interval());
        assertEquals(Duration.ofSeconds(10), ops.console().sampleInterval());
        assertEquals(Duration.ofHours(1), ops.console().history());
        assertEquals(100, ops.deadLetters().defaultLimit());
        assertEquals(1000, ops.deadLetters().maxLimit());
        assertEquals(Duration.ofSeconds(30), ops.deadLetters().readTimeout());
        assertEquals(500, ops.deadLetters().batchSize());
        assertEquals("coupon-grants-dlq", ops.deadLetters().channels().get("coupon-grants").deadLetterTopic());
        assertEquals("payment-callbacks", ops.deadLetters().channels().get("payment-callbacks").topic());
        assertEquals(4096, api.http().maxRequestTargetLength());
        assertEquals(20 * 1024, api.http().maxHeadersSize().asLongValue());
        assertEquals(Duration.ofMinutes(30), api.token().ttl());
        assertEquals(Duration.ofHours(24), api.key().retention());
        assertEquals(200, outbox.batchSize());
        assertEquals(Duration.ofSeconds(2), outbox.pollInterval());
        assertTrue(outbox.relayEnabled());

        assertEquals(Duration.ofDays(7), pipeline.retention());
        assertEquals("10m", pipeline.archive().interval());
        assertEquals(500, pipeline.archive().batchSize());
        assertEquals(200, pipeline.archive().maxBatches());
        assertEquals(Duration.ofHours(24), pipeline.redisTtl("order-submit"));
        assertEquals(Duration.ofHours(24), pipeline.retention("order-submit"));
        assertEquals(Duration.ofHours(26), pipeline.redisTtl("payment-callback"));
        // the schedules' expressions, as the scheduler reads them
        assertEquals("10m", config.getValue("idem.pipeline.archive.interval", String.class));
        assertEquals("60s", config.getValue("idem.reconciliation.interval", String.class));
        assertEquals("10s", config.getValue("idem.console.sample-interval", String.class));
        assertEquals("2s", config.getValue("idem.outbox.poll-interval", String.class));
    }

    @Test
    void everyDocumentedKeyIsReadUnderItsOwnName() throws IOException {
        Map<String, String> set = new HashMap<>();
        set.put("idem.callback.secret", "other-secret");
        set.put("idem.callback.previous-secrets", "old-1,old-2");
        set.put("idem.callback.tolerance", "120s");
        set.put("idem.gateways.wechatpay.api-v3-key", "0123456789abcdef0123456789abcdef");
        set.put("idem.gateways.wechatpay.platform-keys.\"PUB_KEY_ID_1\"", "pem");
        set.put("idem.gateways.alipay.app-id", "2021");
        set.put("idem.gateways.alipay.public-key", "alipay-pem");
        set.put("idem.http.max-request-target-length", "2048");
        set.put("idem.http.max-headers-size", "10K");
        set.put("idem.admin.token", "admin");
        set.put("idem.campaign.paid-coupon-template", "");
        set.put("idem.campaign.paid-coupon-issuer", "external");
        set.put("idem.coupon-issuer.url", "http://127.0.0.1:8090/coupons");
        set.put("idem.coupon-issuer.timeout", "3s");
        set.put("idem.key.retention", "2h");
        set.put("idem.token.ttl", "5m");
        set.put("idem.dedup.retention", "3d");
        set.put("idem.outbox.batch-size", "50");
        set.put("idem.outbox.poll-interval", "1s");
        set.put("idem.outbox.relay-enabled", "false");
        set.put("idem.archive.interval", "1m");
        set.put("idem.archive.batch-size", "100");
        set.put("idem.archive.max-batches", "20");
        set.put("idem.archive.outbox-retention", "5m");
        set.put("idem.reconciliation.grace", "0s");
        set.put("idem.reconciliation.interval", "30s");
        set.put("idem.console.sample-interval", "2s");
        set.put("idem.console.history", "10m");
        set.put("idem.dead-letters.default-limit", "10");
        set.put("idem.dead-letters.max-limit", "20");
        set.put("idem.dead-letters.read-timeout", "5s");
        set.put("idem.dead-letters.batch-size", "7");
        SmallRyeConfig config = config(set);
        PaymentsConfig payments = config.getConfigMapping(PaymentsConfig.class);
        CouponsConfig coupons = config.getConfigMapping(CouponsConfig.class);
        OpsConfig ops = config.getConfigMapping(OpsConfig.class);
        ApiConfig api = config.getConfigMapping(ApiConfig.class);
        OutboxConfig outbox = config.getConfigMapping(OutboxConfig.class);
        PipelineConfig pipeline = config.getConfigMapping(PipelineConfig.class);

        assertEquals("other-secret", payments.callback().secret());
        assertEquals(Optional.of(List.of("old-1", "old-2")), payments.callback().previousSecrets());
        assertEquals(Duration.ofSeconds(120), payments.callback().tolerance());
        assertEquals(Optional.of("0123456789abcdef0123456789abcdef"), payments.gateways().wechatpay().apiV3Key());
        assertEquals(Map.of("PUB_KEY_ID_1", "pem"), payments.gateways().wechatpay().platformKeys());
        assertEquals(Optional.of("2021"), payments.gateways().alipay().appId());
        assertEquals(Optional.of("alipay-pem"), payments.gateways().alipay().publicKey());
        assertEquals(2048, api.http().maxRequestTargetLength());
        assertEquals(10 * 1024, api.http().maxHeadersSize().asLongValue());
        assertEquals(Optional.of("admin"), ops.admin().token());
        assertEquals(Optional.empty(), coupons.campaign().paidCouponTemplate(), "empty: no campaign");
        assertEquals(CouponsConfig.Campaign.Issuer.EXTERNAL, coupons.campaign().paidCouponIssuer());
        assertEquals(Optional.of(URI.create("http://127.0.0.1:8090/coupons")), coupons.couponIssuer().url());
        assertEquals(Duration.ofSeconds(3), coupons.couponIssuer().timeout());
        assertEquals(Duration.ofHours(2), api.key().retention());
        assertEquals(Duration.ofMinutes(5), api.token().ttl());
        assertEquals(50, outbox.batchSize());
        assertEquals(Duration.ofSeconds(1), outbox.pollInterval());
        assertEquals(false, outbox.relayEnabled());
        assertEquals(Duration.ofMinutes(5), ops.archive().outboxRetention());
        assertEquals(Duration.ZERO, ops.reconciliation().grace());
        assertEquals(Duration.ofSeconds(30), ops.reconciliation().interval());
        assertEquals(Duration.ofSeconds(2), ops.console().sampleInterval());
        assertEquals(Duration.ofMinutes(10), ops.console().history());
        assertEquals(10, ops.deadLetters().defaultLimit());
        assertEquals(20, ops.deadLetters().maxLimit());
        assertEquals(Duration.ofSeconds(5), ops.deadLetters().readTimeout());
        assertEquals(7, ops.deadLetters().batchSize());

        // the pipeline's keys follow the documented names
        assertEquals(Duration.ofDays(3), pipeline.retention());
        assertEquals("1m", pipeline.archive().interval());
        assertEquals(100, pipeline.archive().batchSize());
        assertEquals(20, pipeline.archive().maxBatches());
        assertEquals(Duration.ofHours(2), pipeline.redisTtl("order-submit"));
        assertEquals(Duration.ofHours(2), pipeline.retention("order-submit"));
        assertEquals("1m", config.getValue("idem.pipeline.archive.interval", String.class));
    }

    @Test
    void anUndeclaredKeyStopsTheStart() {
        Exception refused = assertThrows(Exception.class, () -> config(Map.of("idem.reconciliation.graze", "0s")));
        assertTrue(refused.getMessage().contains("idem.reconciliation.graze"), refused.getMessage());
    }
}
