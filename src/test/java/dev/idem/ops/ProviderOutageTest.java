package dev.idem.ops;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.startsWith;

import dev.idem.testing.Keycloak;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The provider stops answering while idem runs (Keycloak's processes frozen, as a hung host is):
 * tokens issued before keep working, for operators and users, since idem holds the provider's
 * keys; the console's sign-in says plainly that it is unavailable; the service stays ready.
 */
@QuarkusTest
@TestProfile(OperatorsTest.WithKeycloak.class)
class ProviderOutageTest {

    @Test
    void issuedTokensKeepWorkingAndTheSignInSaysItIsUnavailable() throws Exception {
        String viewer = Keycloak.token("viewer");
        String operator = Keycloak.token("operator");
        OperatorsTest.as(viewer, "GET", "/admin/reconciliation").then().statusCode(200);
        given().redirects().follow(false).get("/admin/console").then().statusCode(302)
                .header("Location", startsWith(Keycloak.REALM));

        List<String> frozen = keycloakProcesses();
        signal("-STOP", frozen);
        try {
            OperatorsTest.as(viewer, "GET", "/admin/reconciliation").then().statusCode(200);
            OperatorsTest.as(operator, "POST", "/admin/archive").then().statusCode(200);
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> given().redirects().follow(false)
                    .get("/admin/console").then().statusCode(503).contentType(containsString("text/html"))
                    .body(containsString("Sign-in is unavailable")));
            given().get("/q/health/ready").then().statusCode(200);
        } finally {
            signal("-CONT", frozen);
        }
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> given().redirects().follow(false)
                .get("/admin/console").then().statusCode(302));
    }

    /** Keycloak's launcher (its pid file, kept by `./idem services keycloak`) and the JVM it started. */
    private static List<String> keycloakProcesses() throws IOException {
        long launcher = Long.parseLong(Files.readString(Keycloak.KEY.resolveSibling("keycloak.pid")).trim());
        List<String> pids = new ArrayList<>();
        ProcessHandle.of(launcher).ifPresent(process -> {
            pids.add(Long.toString(process.pid()));
            process.descendants().forEach(child -> pids.add(Long.toString(child.pid())));
        });
        if (pids.isEmpty()) {
            throw new IllegalStateException("Keycloak is not running (./idem services keycloak)");
        }
        return pids;
    }

    private static void signal(String signal, List<String> pids) throws Exception {
        List<String> command = new ArrayList<>(List.of("kill", signal));
        command.addAll(pids);
        if (new ProcessBuilder(command).inheritIO().start().waitFor() != 0) {
            throw new IllegalStateException("could not send " + signal + " to Keycloak " + pids);
        }
    }
}
