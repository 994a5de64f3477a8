package dev.idem.coupons;

import io.smallrye.config.ConfigMapping;
import java.util.Optional;

@ConfigMapping(prefix = "idem.campaign")
public interface CampaignConfig {
    /**
     * The coupon template granted once per paid order; empty means no campaign. The default,
     * PAY-5OFF, lives in application.properties so that an empty value can switch it off.
     */
    Optional<String> paidCouponTemplate();
}
