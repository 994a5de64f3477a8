package dev.idem.coupons;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.TwoPhaseConfig;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The start-up check of the external issuer's configuration. */
class ExternalCouponIssuerCheckTest {

    record Campaign(CampaignConfig.Issuer paidCouponIssuer) implements CampaignConfig {
        public Optional<String> paidCouponTemplate() { return Optional.of("PAY-5OFF"); }
    }

    record Issuer(Optional<URI> url, Duration timeout) implements CouponIssuerConfig {}

    record TwoPhase(Duration lease) implements TwoPhaseConfig {
        public int maxAttempts() { return 5; }
        public Duration retryDelay() { return Duration.ofSeconds(5); }
        public String recoveryInterval() { return "10s"; }
        public int recoveryBatchSize() { return 100; }
        public int recoveryConcurrency() { return 4; }
    }

    static final Optional<URI> URL = Optional.of(URI.create("http://127.0.0.1:8090/coupons"));

    @Test
    void theLocalIssuerNeedsNothing() {
        assertEquals(List.of(), ExternalCouponIssuer.problems(new Campaign(CampaignConfig.Issuer.LOCAL),
                new Issuer(Optional.empty(), Duration.ofMinutes(5)), new TwoPhase(Duration.ofSeconds(30))));
    }

    @Test
    void theExternalIssuerWithAUrlAndATimeoutShorterThanTheLeaseIsAccepted() {
        assertEquals(List.of(), ExternalCouponIssuer.problems(new Campaign(CampaignConfig.Issuer.EXTERNAL),
                new Issuer(URL, Duration.ofSeconds(5)), new TwoPhase(Duration.ofSeconds(30))));
    }

    @Test
    void theExternalIssuerWithoutAUrlOrSlowerThanTheLeaseIsRefused() {
        List<String> problems = ExternalCouponIssuer.problems(new Campaign(CampaignConfig.Issuer.EXTERNAL),
                new Issuer(Optional.empty(), Duration.ofSeconds(30)), new TwoPhase(Duration.ofSeconds(30)));
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("idem.coupon-issuer.url"), problems.get(0));
        assertTrue(problems.get(1).contains("idem.pipeline.lease"), problems.get(1));
    }
}
