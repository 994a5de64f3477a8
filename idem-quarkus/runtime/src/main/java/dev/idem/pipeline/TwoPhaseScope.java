package dev.idem.pipeline;

import static java.lang.annotation.ElementType.FIELD;
import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.ElementType.PARAMETER;
import static java.lang.annotation.ElementType.TYPE;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import jakarta.enterprise.util.AnnotationLiteral;
import jakarta.inject.Qualifier;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;

/**
 * Names the scope whose two-phase records a {@link TwoPhaseWork} bean completes. One bean per
 * scope: the build fails on a second one, and on a two-phase work without a scope.
 */
@Qualifier
@Retention(RUNTIME)
@Target({TYPE, METHOD, FIELD, PARAMETER})
public @interface TwoPhaseScope {

    /** The scope, as the requests of {@code executeTwoPhase} name it. */
    String value();

    /** The qualifier as a value, to look a scope's work up. */
    final class Literal extends AnnotationLiteral<TwoPhaseScope> implements TwoPhaseScope {
        private final String value;

        /** The qualifier of {@code value}'s work. */
        public Literal(String value) {
            this.value = value;
        }

        @Override
        public String value() {
            return value;
        }
    }
}
