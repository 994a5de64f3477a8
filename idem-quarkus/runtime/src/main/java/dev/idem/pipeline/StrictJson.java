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
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.type.LogicalType;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Reads a payload (a Kafka record, a request body) strictly and turns every way it can be wrong
 * into one readable sentence: for a dead-letter reason or a 400. Money and ids are never guessed:
 * "1999" is not 1999, 19.99 is not 19, 42 is not "42"; unknown members, trailing data and a member
 * named twice are refused too (parsers disagree on which copy counts, and a payment checked
 * against one value must not be booked with the other). The application's own ObjectMapper
 * settings are kept; these rules are added on a copy of it.
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

    /** How Jackson's parser words a repeated member ({@code STRICT_DUPLICATE_DETECTION}). */
    private static final Pattern REPEATED = Pattern.compile("Duplicate field '(.*)'");

    private final ObjectMapper mapper;
    /** A reader per type: {@code mapper.readValue} resolves the type and its deserializer on every call. */
    private final Map<Class<?>, ObjectReader> readers = new ConcurrentHashMap<>();

    StrictJson(ObjectMapper mapper) {
        this.mapper = strict(mapper.copy());
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
     * Reads {@code body} as {@code type}, then applies {@code validate}, which names the first
     * violated rule or answers empty.
     */
    public <T> Parsed<T> read(byte[] body, Class<T> type, Function<T, Optional<String>> validate) {
        if (body == null || body.length == 0) {
            return new Parsed.Invalid<>("the body is empty");
        }
        T value;
        try {
            value = readers.computeIfAbsent(type, mapper::readerFor).readValue(body);
        } catch (UnrecognizedPropertyException unknown) {
            return new Parsed.Invalid<>("unknown member '" + unknown.getPropertyName() + "'");
        } catch (StreamReadException unparsable) {
            return new Parsed.Invalid<>(unparsable(unparsable));
        } catch (JsonMappingException mistyped) {
            // the parser's own failure, met while a nested value was read
            if (mistyped.getCause() instanceof StreamReadException unparsable) {
                return new Parsed.Invalid<>(unparsable(unparsable));
            }
            return new Parsed.Invalid<>(mistyped.getPath().isEmpty()
                    ? "the body must be a JSON object"
                    : "member '" + path(mistyped) + "' has the wrong type or format");
        } catch (JacksonException malformed) {
            return new Parsed.Invalid<>("the body is not well-formed JSON");
        } catch (IOException unreadable) {
            return new Parsed.Invalid<>("the body could not be read");
        }
        if (value == null) {
            return new Parsed.Invalid<>("the body must be a JSON object");
        }
        return validate.apply(value).<Parsed<T>>map(Parsed.Invalid::new).orElseGet(() -> new Parsed.Valid<>(value));
    }

    private static String unparsable(StreamReadException e) {
        Matcher repeated = REPEATED.matcher(String.valueOf(e.getOriginalMessage()));
        return repeated.matches()
                ? "member '" + repeated.group(1) + "' appears more than once"
                : "the body is not well-formed JSON";
    }

    private static String path(JsonMappingException e) {
        return e.getPath().stream()
                .map(ref -> ref.getFieldName() != null ? ref.getFieldName() : "[" + ref.getIndex() + "]")
                .collect(Collectors.joining("."));
    }
}
