package dev.idem.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A profile's overrides left behind by an application that failed to start do not reach the next profile's classes. */
class ProfilePropertiesPutBackTest {

    static final String KEY = "idem.testing.lent-by-profile";
    static final String KEPT = "idem.testing.set-before-the-run";

    public static class Lends implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(KEY, "", KEPT, "the profile's");
        }
    }

    public static class Other implements QuarkusTestProfile {}

    final ProfilePropertiesPutBack putBack = new ProfilePropertiesPutBack();

    @AfterEach
    void clear() {
        System.clearProperty(KEY);
        System.clearProperty(KEPT);
    }

    @Test
    void whatAProfileLeftIsPutBackBeforeAClassUnderAnotherProfileOrNone() {
        System.setProperty(KEPT, "the run's");
        putBack.testPlanExecutionStarted(null);

        putBack.classStarts(Lends.class);
        failedToStartLeaving();
        putBack.classStarts(Other.class);

        assertNull(System.getProperty(KEY));
        assertEquals("the run's", System.getProperty(KEPT));

        putBack.classStarts(Lends.class);
        failedToStartLeaving();
        putBack.classStarts(null);

        assertNull(System.getProperty(KEY));
    }

    @Test
    void theNextClassOfTheSameProfileKeepsItsRunningApplicationsProperties() {
        putBack.testPlanExecutionStarted(null);

        putBack.classStarts(Lends.class);
        failedToStartLeaving();
        putBack.classStarts(Lends.class);

        assertEquals("", System.getProperty(KEY));
    }

    /** What Quarkus leaves when the application of a class under {@link Lends} fails to start. */
    private static void failedToStartLeaving() {
        new Lends().getConfigOverrides().forEach(System::setProperty);
    }
}
