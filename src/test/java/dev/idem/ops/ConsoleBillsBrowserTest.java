package dev.idem.ops;

import static com.microsoft.playwright.assertions.PlaywrightAssertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.microsoft.playwright.Locator;
import com.microsoft.playwright.Page;
import com.microsoft.playwright.assertions.LocatorAssertions;
import com.microsoft.playwright.options.AriaRole;
import dev.idem.testing.Browser;
import dev.idem.testing.Callbacks;
import dev.idem.testing.Db;
import dev.idem.testing.GatewayApi;
import dev.idem.testing.GatewayBillsOn;
import dev.idem.testing.GatewayQueriesOn;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.LocalDate;
import org.junit.jupiter.api.Test;

/**
 * The console's bills, in a real browser: an operator imports today's WeChat Pay bill from the
 * page, the payment whose notification was lost is applied, and the import shows in the list.
 */
@QuarkusTest
@TestProfile(GatewayBillsOn.class)
class ConsoleBillsBrowserTest {

    static final LocatorAssertions.ContainsTextOptions PATIENT = new LocatorAssertions.ContainsTextOptions().setTimeout(60_000);

    @TestHTTPResource("/admin/console")
    URL console;

    @Inject
    Pool pool;

    @Test
    void aBillImportedFromThePageAppliesTheLostPaymentAndIsListed() {
        String lost = Callbacks.newOrder("console-bills", 1999, "wechatpay");
        GatewayQueriesOn.Apis.wechatpay().payWithoutNotifying(lost, "4200" + lost.replace("-", ""), 1999);
        LocalDate today = GatewayApi.today();

        try (Browser browser = Browser.start()) {
            Page page = browser.newPage();
            page.navigate(console.toString());
            page.getByLabel("Admin token").fill(AdminTest.TOKEN);
            page.getByRole(AriaRole.BUTTON, new Page.GetByRoleOptions().setName("Sign in")).click();
            page.locator("#bill-gateway").selectOption("wechatpay");
            page.locator("#bill-date").fill(today.toString());
            page.getByRole(AriaRole.BUTTON, new Page.GetByRoleOptions().setName("Fetch and import")).click();

            assertThat(page.locator("#bill-result")).containsText("applied", PATIENT);
            Locator row = page.locator("#bills-rows tr[data-gateway='wechatpay'][data-date='" + today + "']");
            assertThat(row).hasCount(1);
            assertThat(row.locator("td[data-finding='paidThereNotHere']")).not().hasText("0");
        }
        assertEquals("PAID", new Db(pool).string("SELECT status FROM orders WHERE id = $1", lost));
    }
}
