package dev.idem.pipeline.kafka;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * The members a record type says a value must carry: every component of a Java record, but those
 * declared {@code Optional} (or {@code OptionalInt}, ...) and those annotated {@code @Nullable}
 * (Jakarta's, JSpecify's, any named so), checked in nested records and in lists of them. A
 * primitive member cannot be absent: the reader refuses it already. JSON can leave a member out
 * or give it {@code null}; either way a member the work counts on is not there, and the record is
 * refused rather than applied with a null.
 */
final class RequiredMembers {

    /** A record's component as JSON names it, how to read it, and whether it may be absent. */
    private record Member(String name, Method accessor, boolean required) {}

    private static final ClassValue<List<Member>> MEMBERS = new ClassValue<>() {
        @Override
        protected List<Member> computeValue(Class<?> type) {
            List<Member> members = new ArrayList<>();
            for (RecordComponent component : type.getRecordComponents()) {
                Method accessor = component.getAccessor();
                accessor.setAccessible(true);
                members.add(new Member(jsonName(component), accessor, required(component)));
            }
            return List.copyOf(members);
        }
    };

    private RequiredMembers() {}

    /** The first member {@code value} lacks, as a dead-letter reason; empty when it has them all. */
    static Optional<String> missing(Object value) {
        return missing(value, "");
    }

    private static Optional<String> missing(Object value, String path) {
        if (value instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) {
                Optional<String> missing = missing(item, path + "[" + i++ + "]");
                if (missing.isPresent()) {
                    return missing;
                }
            }
            return Optional.empty();
        }
        if (value == null || !value.getClass().isRecord()) {
            return Optional.empty();
        }
        for (Member member : MEMBERS.get(value.getClass())) {
            String at = path.isEmpty() ? member.name() : path + "." + member.name();
            Object held = read(member, value);
            if (held == null) {
                if (member.required()) {
                    return Optional.of("member '" + at + "' is missing or null");
                }
            } else {
                Optional<String> missing = missing(held, at);
                if (missing.isPresent()) {
                    return missing;
                }
            }
        }
        return Optional.empty();
    }

    private static Object read(Member member, Object value) {
        try {
            return member.accessor().invoke(value);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("cannot read " + member.name() + " of " + value.getClass().getName(), e);
        }
    }

    private static boolean required(RecordComponent component) {
        Class<?> type = component.getType();
        if (type.isPrimitive() || type == Optional.class || type == OptionalInt.class || type == OptionalLong.class
                || type == OptionalDouble.class) {
            return false;
        }
        return !nullable(component) && !nullable(component.getAccessor())
                && Arrays.stream(component.getAnnotatedType().getAnnotations()).noneMatch(RequiredMembers::isNullable);
    }

    private static boolean nullable(AnnotatedElement element) {
        return Arrays.stream(element.getAnnotations()).anyMatch(RequiredMembers::isNullable);
    }

    private static boolean isNullable(Annotation annotation) {
        return annotation.annotationType().getSimpleName().equals("Nullable");
    }

    private static String jsonName(RecordComponent component) {
        JsonProperty named = component.getAnnotation(JsonProperty.class);
        if (named == null) {
            named = component.getAccessor().getAnnotation(JsonProperty.class);
        }
        return named != null && !named.value().isEmpty() ? named.value() : component.getName();
    }
}
