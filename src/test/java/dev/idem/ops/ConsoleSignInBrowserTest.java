package dev.idem.ops;

import static com.microsoft.playwright.assertions.PlaywrightAssertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.microsoft.playwright.Page;
import com.microsoft.playwright.options.AriaRole;
import dev.idem.testing.Browser;
import dev.idem.testing.Db;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.URL;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The console signs in at the real Keycloak of `./idem services keycloak`, in Chromium: a viewer
 * sees everything with the change buttons disabled, and the API refuses a change from the page
 * anyway; an operator repairs, and the audit trail names them; a change without the page's CSRF
 * token is refused; signing out ends the session.
 */
@QuarkusTest
@TestProfile(OperatorsTest.WithKeycloak.class)
class ConsoleSignInBrowserTest {

    /** Keycloak's sign-in page of the realm (Playwright hands the pattern to JavaScript: no \\Q…\\E). */
    static final Pattern SIGN_IN_PAGE = Pattern.compile("^http://127\\.0\\.0\\.1:8180/realms/idem/protocol/openid-connect/auth\\?.*");

    @AutoClose
    static Browser browser;

    @TestHTTPResource("/admin/console")
    URL console;

    @Inject
    Pool pool;

    @BeforeAll
    static void startBrowser() {
        browser = Browser.start();
    }

    /** Opens the console, which sends the browser to Keycloak's sign-in page; signs in there as {@code user}. */
    Page signIn(String user) {
        Page page = browser.newPage();
        page.navigate(console.toString());
        assertThat(page).hasURL(SIGN_IN_PAGE);
        page.locator("#username").fill(user);
        page.locator("#password").fill(user);
        page.locator("#kc-login").click();
        assertThat(page).hasURL(Pattern.compile(".*/admin/console/?$"));
        assertThat(page.locator("#dashboard")).isVisible();
        return page;
    }

    /** What the API answers a POST from the page with the console's session, with or without its CSRF header. */
    static Map<?, ?> postFromPage(Page page, String path, boolean withCsrf) {
        return (Map<?, ?>) page.evaluate("""
                async ([path, withCsrf]) => {
                  const csrf = (document.cookie.match(/(?:^|; )idem-csrf=([^;]*)/) || [])[1] || '';
                  const response = await fetch(path, { method: 'POST', credentials: 'same-origin',
                    headers: withCsrf ? { 'X-CSRF-Token': decodeURIComponent(csrf) } : {} });
                  return { status: response.status, body: await response.text() };
                }""", List.of(path, withCsrf));
    }

    @Test
    void aViewerSeesButCannotChangeAnOperatorRepairsAndSigningOutEndsIt() {
        Page viewer = signIn("viewer");
        assertThat(viewer.locator("#who")).hasText("Vera Viewer · viewer");
        assertThat(viewer.locator("#reconciliation-checks tr").first()).isVisible();
        for (String button : List.of("#repair", "#redrive-hanging", "#redrive-all")) {
            assertThat(viewer.locator(button)).isDisabled();
        }
        assertThat(viewer.locator("#bill-form button")).isDisabled();
        Map<?, ?> refused = postFromPage(viewer, "/admin/archive", true);
        assertEquals(403, ((Number) refused.get("status")).intValue(), refused.toString());
        assertTrue(refused.get("body").toString().contains("ADMIN_FORBIDDEN"), refused.toString());

        viewer.getByRole(AriaRole.BUTTON, new Page.GetByRoleOptions().setName("Sign out")).click();
        // signed out at the provider too: the console sends the browser back to its sign-in
        assertThat(viewer).hasURL(SIGN_IN_PAGE);
        viewer.close();

        Page operator = signIn("operator");
        assertThat(operator.locator("#who")).hasText("Otto Operator · operator");
        Map<?, ?> forged = postFromPage(operator, "/admin/archive", false);
        assertEquals(403, ((Number) forged.get("status")).intValue(), "a change without the page's CSRF token: " + forged);
        operator.locator("#repair").click();
        operator.locator("#repair-yes").click();
        assertThat(operator.locator("#repair-result")).not().isEmpty();
        // the panel's row of this repair (other tests' entries are there too)
        assertThat(operator.locator("#audit-rows tr", new Page.LocatorOptions().setHasText("reconciliation.repair"))
                .first()).containsText("Otto Operator");
        assertEquals(1, new Db(pool).count("""
                SELECT count(*) FROM admin_audit WHERE action = 'reconciliation.repair' AND name = 'Otto Operator'
                AND status = 200 AND at > now() - interval '1 minute'"""));
        operator.close();
    }
}
