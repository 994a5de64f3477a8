package dev.idem.pipeline.rest;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.idem.pipeline.IdemRequest;
import io.quarkus.arc.DefaultBean;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The default {@link RequestFingerprint}: SHA-256 over the method, the target and the body. A body
 * that is JSON (bytes or text that parse as JSON, or an object the method received) counts by its
 * content: the members sorted by name, no spacing; any other body counts by its bytes.
 */
@ApplicationScoped
@DefaultBean
public class MethodPathBody implements RequestFingerprint {

    private final ObjectMapper mapper;
    /** Text counts as JSON only when all of it is one value whose members are named once each. */
    private final ObjectReader strict;

    MethodPathBody(ObjectMapper mapper) {
        this.mapper = mapper;
        this.strict = mapper.reader()
                .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    }

    @Override
    public String of(String scope, String method, String target, Object body) {
        return IdemRequest.fingerprint(method, target, new String(canonical(body), StandardCharsets.ISO_8859_1));
    }

    private byte[] canonical(Object body) {
        if (body == null) {
            return new byte[0];
        }
        byte[] bytes = body instanceof byte[] raw ? raw
                : body instanceof String text ? text.getBytes(StandardCharsets.UTF_8)
                : body instanceof Buffer buffer ? buffer.getBytes()
                : body instanceof io.vertx.mutiny.core.buffer.Buffer buffer ? buffer.getBytes()
                : null;
        try {
            JsonNode tree;
            if (bytes != null) {
                try {
                    tree = strict.readTree(bytes);
                } catch (IOException notJson) {
                    return bytes;
                }
                if (tree == null || tree.isMissingNode()) {
                    return bytes;
                }
            } else {
                tree = mapper.valueToTree(body instanceof JsonObject object ? object.getMap()
                        : body instanceof JsonArray array ? array.getList() : body);
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (JsonGenerator json = mapper.getFactory().createGenerator(out)) {
                write(tree, json);
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code node} with every object's members in name order. */
    private static void write(JsonNode node, JsonGenerator json) throws IOException {
        if (node.isObject()) {
            List<String> names = new ArrayList<>();
            node.fieldNames().forEachRemaining(names::add);
            names.sort(null);
            json.writeStartObject();
            for (String name : names) {
                json.writeFieldName(name);
                write(node.get(name), json);
            }
            json.writeEndObject();
        } else if (node.isArray()) {
            json.writeStartArray();
            for (JsonNode element : node) {
                write(element, json);
            }
            json.writeEndArray();
        } else {
            json.writeTree(node);
        }
    }
}
