package dev.idem.coupons;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;

/** The paid-order campaign, {@code idem.campaign.*}, and the external issuer of its coupons, {@code idem.coupon-issuer.*}. */
@ConfigMapping(prefix = "idem")
public interface CouponsConfig {

    Campaign campaign();

    CouponIssuer couponIssuer();

    interface Campaign {
        /**
         * The coupon template granted once per paid order; empty means no campaign. The default,
         * PAY-5OFF, lives in application.properties so that an empty value can switch it off.
         */
        Optional<String> paidCouponTemplate();

        /**
         * Who issues the campaign's coupons: {@code local} inserts them in the grant's own
         * transaction; {@code external} has the issuer at {@code idem.coupon-issuer.url} issue them
         * (two-phase mode) and keeps the local row, with the issuer's coupon id, at confirmation.
         */
        @WithDefault("local")
        Issuer paidCouponIssuer();

        enum Issuer { LOCAL, EXTERNAL }
    }

    /** The external coupon issuer, used when {@code idem.campaign.paid-coupon-issuer=external}. */
    interface CouponIssuer {
        /** Where grants are POSTed; required with the external issuer. */
        Optional<URI> url();

        /** Longest wait for the issuer's answer (connect included); must be shorter than {@code idem.pipeline.lease}. */
        @WithDefault("5s")
        Duration timeout();
    }
}
