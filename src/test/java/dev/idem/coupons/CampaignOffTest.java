package dev.idem.coupons;

import static dev.idem.testing.Callbacks.deliver;
import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.Db;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** An empty campaign template switches the paid-order campaign off: orders are paid, no grant is written. */
@QuarkusTest
@TestProfile(CampaignOffTest.NoCampaign.class)
class CampaignOffTest {

    public static class NoCampaign implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("idem.campaign.paid-coupon-template", "");
        }
    }

    @Inject
    Pool pool;

    @Test
    void aPaidOrderWritesNoGrant() {
        Db db = new Db(pool);
        String order = newOrder("no-campaign-" + UUID.randomUUID(), 1999);

        deliver(callback("T-" + order, order, 1999, "SUCCESS")).then().statusCode(200).body("code", equalTo("SUCCESS"));

        assertEquals("PAID", db.string("SELECT status FROM orders WHERE id = $1", order));
        assertEquals(0, db.count("SELECT count(*) FROM orders WHERE id = $1 AND campaign IS NOT NULL", order),
                "the order earned no campaign, so reconciliation expects no coupon for it");
        assertEquals(0, db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1", "paid:" + order));
    }
}
