package dev.idem.testing;

import io.quarkus.runtime.LaunchMode;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Puts back the system properties a test profile lent its application before a class that runs
 * under another profile. Quarkus hands a profile's config overrides to the application as system
 * properties and takes them back when the application stops, but not when it fails late in its
 * start, once the HTTP server is being bound (quarkusio/quarkus#27996): one class whose application
 * failed there would lend its overrides, an empty campaign for instance, to every class after it,
 * and one failure would become twenty. Registered for every test run in {@code META-INF/services}.
 */
public class ProfilePropertiesPutBack implements TestExecutionListener {

    /** What Quarkus sets besides the overrides (AppMakerHelper.setExtraPropertiesRestorably). */
    static final List<String> QUARKUS_KEYS = List.of("quarkus.arc.selected-alternatives",
            "quarkus.arc.test.disable-application-lifecycle-observers", LaunchMode.TEST.getProfileKey());

    private final Set<String> lent = new HashSet<>();
    private Properties before = new Properties();
    private Class<?> lastProfile;

    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        before = (Properties) System.getProperties().clone();
    }

    @Override
    public void executionStarted(TestIdentifier test) {
        if (test.isContainer() && test.getSource().orElse(null) instanceof ClassSource source) {
            classStarts(profileOf(source.getClassName()));
        }
    }

    /**
     * A class under {@code profile} (null: none) starts: what other profiles lent goes back first.
     * Before the first class nothing is lent yet.
     */
    void classStarts(Class<? extends QuarkusTestProfile> profile) {
        if (!Objects.equals(profile, lastProfile)) {
            for (String key : lent) {
                String value = before.getProperty(key);
                if (value == null) {
                    System.clearProperty(key);
                } else {
                    System.setProperty(key, value);
                }
            }
        }
        lastProfile = profile;
        if (profile != null) {
            lent.addAll(keysOf(profile));
            lent.addAll(QUARKUS_KEYS);
        }
    }

    private static Set<String> keysOf(Class<? extends QuarkusTestProfile> profile) {
        try {
            return profile.getDeclaredConstructor().newInstance().getConfigOverrides().keySet();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot make test profile " + profile.getName(), e);
        }
    }

    private static Class<? extends QuarkusTestProfile> profileOf(String className) {
        try {
            Class<?> testClass = Class.forName(className, false, ProfilePropertiesPutBack.class.getClassLoader());
            TestProfile profile = testClass.getAnnotation(TestProfile.class);
            return profile == null ? null : profile.value();
        } catch (ClassNotFoundException e) {
            return null;
        }
    }
}
