package dev.idem.coupons;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The start-up check of the external issuer's configuration. */
class ExternalCouponIssuerCheckTest {

    record Campaign(CouponsConfig.Campaign.Issuer paidCouponIssuer) implements CouponsConfig.Campaign {
        public Optional<String> paidCouponTemplate() { return Optional.of("PAY-5OFF"); }
    }

    record Issuer(Optional<URI> url, Duration timeout) implements CouponsConfig.CouponIssuer {}

    static final Duration LEASE = Duration.ofSeconds(30);

    static final Optional<URI> URL = Optional.of(URI.create("http://127.0.0.1:8090/coupons"));

    @Test
    void theLocalIssuerNeedsNothing() {
        assertEquals(List.of(), ExternalCouponIssuer.problems(new Campaign(CouponsConfig.Campaign.Issuer.LOCAL),
                new Issuer(Optional.empty(), Duration.ofMinutes(5)), LEASE));
    }

    @Test
    void theExternalIssuerWithAUrlAndATimeoutShorterThanTheLeaseIsAccepted() {
        assertEquals(List.of(), ExternalCouponIssuer.problems(new Campaign(CouponsConfig.Campaign.Issuer.EXTERNAL),
                new Issuer(URL, Duration.ofSeconds(5)), LEASE));
    }

    @Test
    void theExternalIssuerWithoutAUrlOrSlowerThanTheLeaseIsRefused() {
        List<String> problems = ExternalCouponIssuer.problems(new Campaign(CouponsConfig.Campaign.Issuer.EXTERNAL),
                new Issuer(Optional.empty(), Duration.ofSeconds(30)), LEASE);
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("idem.coupon-issuer.url"), problems.get(0));
        assertTrue(problems.get(1).contains("idem.pipeline.lease"), problems.get(1));
    }
}
