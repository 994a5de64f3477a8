package dev.idem.coupons;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;

/** The external coupon issuer, used when {@code idem.campaign.paid-coupon-issuer=external}. */
@ConfigMapping(prefix = "idem.coupon-issuer")
public interface CouponIssuerConfig {

    /** Where grants are POSTed; required with the external issuer. */
    Optional<URI> url();

    /** Longest wait for the issuer's answer (connect included); must be shorter than {@code idem.pipeline.lease}. */
    @WithDefault("5s")
    Duration timeout();
}
