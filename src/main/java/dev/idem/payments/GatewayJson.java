package dev.idem.payments;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;
import dev.idem.pipeline.StrictJson.Parsed;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads a gateway's own JSON. Unlike the API's bodies, members idem does not know are skipped: a
 * gateway adds members to its notifications without a new version, and its signature already
 * vouches for the body. Types stay strict (an amount is never read from text or a fraction), and a member
 * named twice is refused, as everywhere else.
 */
@ApplicationScoped
public class GatewayJson {

    private final ObjectMapper mapper;
    private final Map<Class<?>, ObjectReader> readers = new ConcurrentHashMap<>();

    GatewayJson(ObjectMapper mapper) {
        this.mapper = mapper.copy();
        this.mapper.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION.mappedFeature());
        this.mapper.disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        this.mapper.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        this.mapper.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
        this.mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.String, CoercionAction.Fail);
        this.mapper.coercionConfigFor(LogicalType.Textual).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
        this.mapper.coercionConfigFor(LogicalType.Textual).setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
    }

    public <T> Parsed<T> read(byte[] json, Class<T> type, String what) {
        if (json == null || json.length == 0) {
            return new Parsed.Invalid<>(what + " is empty");
        }
        try {
            T value = readers.computeIfAbsent(type, mapper::readerFor).readValue(json);
            return value == null ? new Parsed.Invalid<>(what + " must be a JSON object") : new Parsed.Valid<>(value);
        } catch (JacksonException unreadable) {
            return new Parsed.Invalid<>(what + " is not well-formed JSON of the documented shape");
        } catch (IOException unreadable) {
            return new Parsed.Invalid<>(what + " could not be read");
        }
    }
}
