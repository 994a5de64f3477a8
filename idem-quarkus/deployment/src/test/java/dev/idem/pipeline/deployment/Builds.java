package dev.idem.pipeline.deployment;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.QuarkusUnitTest;
import java.util.ArrayList;
import java.util.List;

/** Applications built with the extension alone, to see what its build accepts; none of them starts. */
final class Builds {

    private Builds() {}

    /** An application of {@code classes} whose build is expected to fail. */
    static QuarkusUnitTest failing(Class<?>... classes) {
        return new QuarkusUnitTest()
                .withApplicationRoot(jar -> jar.addClasses(classes).addClass(Builds.class))
                .overrideConfigKey("quarkus.devservices.enabled", "false")
                .overrideConfigKey("quarkus.datasource.db-kind", "postgresql");
    }

    /** An application of {@code classes} whose build must fail with {@code expected} among its messages. */
    static QuarkusUnitTest failingWith(String expected, Class<?>... classes) {
        return failing(classes).assertException(failure -> {
            String messages = messages(failure);
            assertTrue(messages.contains(expected), messages);
        });
    }

    /** Every message of {@code failure} and its causes and suppressed failures, one per line. */
    static String messages(Throwable failure) {
        List<String> messages = new ArrayList<>();
        collect(failure, messages);
        return String.join("\n", messages);
    }

    private static void collect(Throwable failure, List<String> messages) {
        if (failure == null) {
            return;
        }
        messages.add(String.valueOf(failure.getMessage()));
        for (Throwable suppressed : failure.getSuppressed()) {
            collect(suppressed, messages);
        }
        collect(failure.getCause(), messages);
    }
}
