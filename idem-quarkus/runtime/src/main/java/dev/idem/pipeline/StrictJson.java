package dev.idem.pipeline;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.type.LogicalType;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Reads a payload (a Kafka record, a request body) strictly and turns every way it can be wrong
 * into one readable sentence that names the member and the rule: for a dead-letter reason or a
 * 400. Money and ids are never guessed: "1999" is not 1999, 19.99 is not 19, 42 is not "42";
 * trailing data and a member named twice are refused too (parsers disagree on which copy counts,
 * and a payment checked against one value must not be booked with the other). A member the type
 * does not declare is refused by {@link #read(byte[], Class, Function)}, and ignored when asked
 * ({@link UnknownMembers#IGNORED}: a consumer's producers add members on their own schedule). The
 * application's own ObjectMapper settings are kept; these rules are added on a copy of it.
 * <p>
 * A type read from JSON that another party defines and signs (a payment gateway's notification)
 * declares {@code @JsonIgnoreProperties(ignoreUnknown = true)}: such a party adds members without
 * a new version. Every other rule still holds for it.
 * <p>
 * Payloads arrive as bytes, so Quarkus does not see the types they are read into: each one carries
 * {@code @RegisterForReflection}, or a native image could not construct it.
 */
@ApplicationScoped
public class StrictJson {

    /** A payload read into {@code T}, or why it could not be. */
    public sealed interface Parsed<T> {
        /** The payload read, and every rule of {@code validate} kept. */
        record Valid<T>(T value) implements Parsed<T> {}

        /** Why the payload could not be read or broke a rule, in one sentence. */
        record Invalid<T>(String detail) implements Parsed<T> {}
    }

    /** What becomes of a member the type does not declare. */
    public enum UnknownMembers {
        /** The payload is refused, naming the member: for bodies a client signs or sends to this API. */
        REFUSED,
        /** The member is skipped, as a tolerant reader does: for records whose producers evolve apart. */
        IGNORED
    }

    /** How Jackson's parser words a repeated member ({@code STRICT_DUPLICATE_DETECTION}). */
    private static final Pattern REPEATED = Pattern.compile("Duplicate field '(.*)'");
    /** How Jackson words a member {@code @JsonProperty(required = true)} that is absent. */
    private static final Pattern REQUIRED = Pattern.compile("Missing required creator property '([^']*)'.*", Pattern.DOTALL);

    private final ObjectMapper strict;
    private final ObjectMapper tolerant;
    /** A reader per type: {@code mapper.readValue} resolves the type and its deserializer on every call. */
    private final Map<Class<?>, ObjectReader> strictReaders = new ConcurrentHashMap<>();
    private final Map<Class<?>, ObjectReader> tolerantReaders = new ConcurrentHashMap<>();

    StrictJson(ObjectMapper mapper) {
        this.strict = strict(mapper.copy());
        this.tolerant = strict(mapper.copy()).disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    }

    private static ObjectMapper strict(ObjectMapper mapper) {
        mapper.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION.mappedFeature());
        mapper.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        mapper.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        mapper.enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
        mapper.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
        mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.String, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Textual).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Textual).setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Textual).setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        return mapper;
    }

    /**
     * Reads {@code body} as {@code type}, a member it does not declare refused, then applies
     * {@code validate}, which names the first violated rule or answers empty.
     */
    public <T> Parsed<T> read(byte[] body, Class<T> type, Function<T, Optional<String>> validate) {
        return read(body, type, UnknownMembers.REFUSED, validate);
    }

    /**
     * Reads {@code body} as {@code type}, a member it does not declare refused or ignored as
     * {@code unknown} says, then applies {@code validate}, which names the first violated rule or
     * answers empty.
     */
    public <T> Parsed<T> read(byte[] body, Class<T> type, UnknownMembers unknown, Function<T, Optional<String>> validate) {
        if (body == null || body.length == 0) {
            return new Parsed.Invalid<>("the body is empty");
        }
        T value;
        try {
            value = unknown == UnknownMembers.REFUSED
                    ? strictReaders.computeIfAbsent(type, strict::readerFor).readValue(body)
                    : tolerantReaders.computeIfAbsent(type, tolerant::readerFor).readValue(body);
        } catch (JacksonException unreadable) {
            return new Parsed.Invalid<>(describe(unreadable));
        } catch (IOException unreadable) {
            return new Parsed.Invalid<>("the body could not be read");
        }
        if (value == null) {
            return new Parsed.Invalid<>("the body must be a JSON object");
        }
        return validate.apply(value).<Parsed<T>>map(Parsed.Invalid::new).orElseGet(() -> new Parsed.Valid<>(value));
    }

    /**
     * Why Jackson could not read a body, in one sentence that names the member and the rule (a
     * member unknown, repeated, missing, or of the wrong type; JSON that is not well-formed).
     */
    public static String describe(JacksonException failure) {
        if (failure instanceof UnrecognizedPropertyException unknown) {
            return "unknown member '" + unknown.getPropertyName() + "'";
        }
        if (failure instanceof StreamReadException unparsable) {
            return unparsable(unparsable);
        }
        if (failure instanceof JsonMappingException mistyped) {
            // the parser's own failure, met while a nested value was read
            return mistyped.getCause() instanceof StreamReadException unparsable ? unparsable(unparsable) : mistyped(mistyped);
        }
        return "the body is not well-formed JSON";
    }

    private static String unparsable(StreamReadException e) {
        Matcher repeated = REPEATED.matcher(String.valueOf(e.getOriginalMessage()));
        return repeated.matches()
                ? "member '" + repeated.group(1) + "' appears more than once"
                : "the body is not well-formed JSON";
    }

    /** What is wrong with a member whose value Jackson could not bind, and what was expected. */
    private static String mistyped(JsonMappingException e) {
        String message = String.valueOf(e.getOriginalMessage());
        Matcher required = REQUIRED.matcher(message);
        if (required.matches()) {
            return "member '" + qualified(e, required.group(1)) + "' is missing";
        }
        if (e.getPath().isEmpty()) {
            return "the body must be a JSON object";
        }
        if (message.startsWith("Cannot map `null` into type")) {
            // a primitive member absent or null: there is no value to take
            return "member '" + path(e) + "' is missing or null";
        }
        Class<?> target = e instanceof MismatchedInputException mismatch ? mismatch.getTargetType() : null;
        String expected = expected(target);
        return "member '" + path(e) + "' has the wrong type or format" + (expected == null ? "" : ": " + expected);
    }

    /** The shape a member of {@code type} must have, in words; null when there is nothing simple to say. */
    private static String expected(Class<?> type) {
        if (type == null) {
            return null;
        }
        if (type == byte.class || type == short.class || type == int.class || type == long.class
                || type == Byte.class || type == Short.class || type == Integer.class || type == Long.class
                || type == BigInteger.class) {
            return "a whole number is expected";
        }
        if (type == float.class || type == double.class || type == Float.class || type == Double.class
                || type == BigDecimal.class) {
            return "a number is expected";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false is expected";
        }
        if (CharSequence.class.isAssignableFrom(type)) {
            return "a string is expected";
        }
        if (type.isEnum()) {
            return "one of " + Arrays.stream(type.getEnumConstants()).map(String::valueOf)
                    .collect(Collectors.joining(", ")) + " is expected";
        }
        if (type.isArray() || Collection.class.isAssignableFrom(type)) {
            return "an array is expected";
        }
        if (type.isRecord() || Map.class.isAssignableFrom(type)) {
            return "an object is expected";
        }
        return null;
    }

    /** {@code name} within the object where {@code e} happened (its path may name the member already). */
    private static String qualified(JsonMappingException e, String name) {
        if (e.getPath().isEmpty()) {
            return name;
        }
        String path = path(e);
        return path.equals(name) || path.endsWith("." + name) ? path : path + "." + name;
    }

    private static String path(JsonMappingException e) {
        return e.getPath().stream()
                .map(ref -> ref.getFieldName() != null ? ref.getFieldName() : "[" + ref.getIndex() + "]")
                .collect(Collectors.joining("."));
    }
}
