package dev.idem.coupons;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.util.Optional;

@ConfigMapping(prefix = "idem.campaign")
public interface CampaignConfig {
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
