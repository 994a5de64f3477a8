package dev.idem.ops;

import static com.microsoft.playwright.assertions.PlaywrightAssertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.microsoft.playwright.Locator;
import com.microsoft.playwright.Page;
import com.microsoft.playwright.assertions.LocatorAssertions;
import com.microsoft.playwright.options.AriaRole;
import dev.idem.pipeline.KafkaTestClient;
import dev.idem.testing.Browser;
import dev.idem.testing.Db;
import dev.idem.testing.Storm;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URL;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The operator console in a real browser, read as a person reads it: the text of its panels and
 * the legends and bars of its charts, while a storm, a lost coupon and a poison record happen
 * behind it.
 */
@QuarkusTest
@TestProfile(ConsoleBrowserTest.Console.class)
class ConsoleBrowserTest {

    /**
     * Counters of this boot alone, sampled every 2 s; a lost coupon is a finding at once; callbacks
     * reach this instance only over HTTP, so the charts' payment counts are this test's exactly.
     */
    public static class Console implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "idem.console.sample-interval", "2s",
                    "idem.reconciliation.grace", "0s",
                    "mp.messaging.incoming.payment-callbacks.enabled", "false");
        }
    }

    static final LocatorAssertions.HasTextOptions PATIENTLY = new LocatorAssertions.HasTextOptions().setTimeout(60_000);
    static final LocatorAssertions.ContainsTextOptions PATIENT = new LocatorAssertions.ContainsTextOptions().setTimeout(60_000);
    static final Path SCREENSHOT = Path.of(System.getProperty("basedir", "."), "target", "console", "storm.png");

    @AutoClose
    static Browser browser;

    @TestHTTPResource("/admin/console")
    URL console;

    @Inject
    Db db;

    Page page;

    @BeforeAll
    static void startBrowser() {
        browser = Browser.start();
    }

    @BeforeEach
    void openTab() {
        page = browser.newPage();
        page.navigate(console.toString());
    }

    @AfterEach
    void closeTab() {
        page.close();
    }

    void signIn(String token) {
        page.getByLabel("Admin token").fill(token);
        page.getByRole(AriaRole.BUTTON, new Page.GetByRoleOptions().setName("Sign in")).click();
    }

    @Test
    void withoutTheRightTokenThePageSaysSoAndShowsNothing() {
        assertThat(page.locator("#sign-in")).isVisible();
        assertThat(page.locator("#dashboard")).isHidden();

        signIn("not-the-admin-token");

        assertThat(page.getByRole(AriaRole.ALERT)).hasText(Pattern.compile("admin token was refused"));
        assertThat(page.locator("#dashboard")).isHidden();
        assertEquals(0, page.locator("#reconciliation-checks tr").count());
        assertEquals(0, page.locator(".chart rect").count());
        String seen = page.locator("body").innerText();
        assertFalse(seen.contains("Reconciliation"), seen);
        assertFalse(seen.contains("Dead letters"), seen);
        assertEquals(null, page.evaluate("sessionStorage.getItem('idem.admin-token')"), "a refused token is not kept");

        // a token kept from before, no longer valid, is refused the same way on load
        page.evaluate("sessionStorage.setItem('idem.admin-token', 'an-old-token')");
        page.reload();
        assertThat(page.getByRole(AriaRole.ALERT)).hasText(Pattern.compile("admin token was refused"));
        assertThat(page.locator("#dashboard")).isHidden();
    }

    @Test
    void aStormShowsItsDuplicatesByLayerAndALostCouponIsFoundAndRepairedFromThePage() {
        Instant since = Instant.now();
        signIn(AdminTest.TOKEN);
        assertThat(page.locator("#dashboard")).isVisible();
        page.getByLabel("Findings written since").fill(since.toString());
        page.getByRole(AriaRole.BUTTON, new Page.GetByRoleOptions().setName("Apply")).click();

        Storm storm = new Storm(db).createOrders(200);
        storm.deliver(6, 32, null);
        storm.assertOneCouponPerOrder();

        page.locator("#scope").selectOption("payment-callback");
        Locator deliveries = page.locator("#chart-deliveries");
        assertThat(deliveries.locator("li[data-key=PROCESSED]")).hasText("PROCESSED 200", PATIENTLY);
        assertThat(deliveries.locator("li[data-key=DUPLICATE]")).hasText("DUPLICATE 1,000", PATIENTLY);
        Locator duplicates = page.locator("#chart-duplicates");
        long byLayer = 0;
        for (String layer : new String[] {"redis", "db", "state"}) {
            Locator entry = duplicates.locator("li[data-key=" + layer + "]");
            assertThat(entry).hasText(Pattern.compile("^" + layer + " [0-9,]+$"));
            byLayer += Long.parseLong(entry.getAttribute("data-total"));
        }
        assertEquals(1000, byLayer, "the duplicates the page shows by layer");
        assertTrue(duplicates.locator("rect.bar").count() > 0, "the duplicates chart draws bars");
        assertThat(page.locator("#reconciliation-summary")).hasText("All checks zero since " + since + ".", PATIENTLY);
        page.locator("#window").selectOption("300");
        assertThat(deliveries.locator("li[data-key=DUPLICATE]")).hasText("DUPLICATE 1,000");
        page.screenshot(new Page.ScreenshotOptions().setPath(SCREENSHOT));

        String lost = storm.orderIds.get(0);
        assertEquals(1, db.rows("DELETE FROM coupons WHERE source_key = $1 RETURNING id", "paid:" + lost).size());

        Locator finding = page.locator("#reconciliation-checks tr[data-check=paidOrdersWithoutCoupon]");
        assertThat(finding.locator("td.count")).hasText("1", PATIENTLY);
        assertThat(finding.locator("td.samples")).hasText(lost);
        assertThat(page.locator("#reconciliation-summary")).hasText("1 finding in 1 check.");

        page.getByRole(AriaRole.BUTTON, new Page.GetByRoleOptions().setName("Repair…")).click();
        assertThat(page.getByRole(AriaRole.DIALOG)).containsText("Re-publish the grants");
        page.getByRole(AriaRole.BUTTON, new Page.GetByRoleOptions().setName("Repair now")).click();

        assertThat(page.locator("#repair-result")).containsText("Repaired: 1 grant re-published", PATIENT);
        assertThat(page.locator("#reconciliation-summary")).hasText("All checks zero since " + since + ".", PATIENTLY);
        assertThat(finding.locator("td.count")).hasText("0");
        assertEquals(1, db.count("SELECT count(*) FROM coupons WHERE source_key = $1", "paid:" + lost));
    }

    @Test
    void aPoisonRecordIsShownUnderDeadLettersAndRedrivenFromThePage() {
        String key = "poison-" + UUID.randomUUID();
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            kafka.send("coupon-grants", null, key, "{\"bizKey\": not json");
        }
        signIn(AdminTest.TOKEN);
        page.locator("#channel").selectOption("coupon-grants");

        Locator letters = page.locator("#dead-letters-rows tr").filter(new Locator.FilterOptions().setHasText(key));
        assertThat(letters).hasCount(1, new LocatorAssertions.HasCountOptions().setTimeout(60_000));
        Locator letter = letters.first();
        assertThat(letter.locator("td.reason")).not().isEmpty();
        assertThat(letter.locator("td.value")).hasText("{\"bizKey\": not json");
        String position = letter.getAttribute("data-position");

        letter.getByRole(AriaRole.BUTTON, new Locator.GetByRoleOptions().setName("Re-drive")).click();

        assertThat(page.locator("#dead-letters-result")).containsText(position + ": examined 1, re-driven 1", PATIENT);
        Locator original = page.locator("#dead-letters-rows tr[data-position='" + position + "']");
        assertThat(original.locator("td.redriven")).containsText("re-driven", PATIENT);
        // still poison: it came back with its reason, marked as having come back
        assertThat(letters).hasCount(2, new LocatorAssertions.HasCountOptions().setTimeout(60_000));
        Locator returned = letters.filter(new Locator.FilterOptions().setHasText("came back from " + position));
        assertThat(returned).hasCount(1);
        assertThat(returned.locator("td.reason")).hasText(original.locator("td.reason").innerText());
    }
}
