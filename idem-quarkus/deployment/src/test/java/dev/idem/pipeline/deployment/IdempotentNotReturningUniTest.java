package dev.idem.pipeline.deployment;

import dev.idem.pipeline.rest.Idempotent;
import io.quarkus.test.QuarkusUnitTest;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An @Idempotent method that answers at once, not with a Uni, could not run in the pipeline's
 * reactive transaction: the build stops and says to return a Uni.
 */
class IdempotentNotReturningUniTest {

    @RegisterExtension
    static final QuarkusUnitTest BUILD = Builds.failingWith(
            AnswersAtOnce.class.getName() + ".issue is @Idempotent and must return a Uni", AnswersAtOnce.class);

    @Test
    void theBuildFails() {
        // the extension above asserts the failure; nothing runs
    }

    @Path("/vouchers")
    public static class AnswersAtOnce {
        @POST
        @Idempotent(scope = "voucher-issue")
        public String issue(String body, SqlConnection tx) {
            return body;
        }
    }
}
