package dev.idem.pipeline.deployment;

import dev.idem.pipeline.rest.Idempotent;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An @Idempotent method without a SqlConnection parameter has no transaction to write in, so its
 * key could never be recorded with what it changes: the build stops and names the parameter to add.
 */
class IdempotentWithoutConnectionTest {

    @RegisterExtension
    static final QuarkusUnitTest BUILD = Builds.failingWith(WithoutConnection.class.getName() + ".issue is @Idempotent "
            + "and must take a io.vertx.mutiny.sqlclient.SqlConnection parameter, and send its statements through it",
            WithoutConnection.class);

    @Test
    void theBuildFails() {
        // the extension above asserts the failure; nothing runs
    }

    @Path("/vouchers")
    public static class WithoutConnection {
        @POST
        @Idempotent(scope = "voucher-issue")
        public Uni<String> issue(String body) {
            return Uni.createFrom().item(body);
        }
    }
}
