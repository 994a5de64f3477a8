package dev.idem.payments.alipay;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import java.io.IOException;
import java.util.Arrays;
import java.util.Optional;

/**
 * An open-platform API's answer, {@code {"<method>_response":{...},"sign":"..."}}: Alipay signs the
 * response object's text exactly as it was sent, so the bytes are cut out of the body where the
 * parser found the object, never re-encoded. A member named twice anywhere is refused.
 */
record AlipayResponse(byte[] content, Optional<String> sign) {

    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    /** The object named {@code name} and the sign beside it; empty when the body is no such answer. */
    static Optional<AlipayResponse> read(byte[] body, String name) {
        byte[] content = null;
        String sign = null;
        try (JsonParser parser = JSON.createParser(body)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return Optional.empty();
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String field = parser.currentName();
                JsonToken value = parser.nextToken();
                if (name.equals(field) && value == JsonToken.START_OBJECT) {
                    long start = parser.currentTokenLocation().getByteOffset();
                    parser.skipChildren();
                    long end = parser.currentTokenLocation().getByteOffset() + 1;
                    content = Arrays.copyOfRange(body, (int) start, (int) end);
                } else if ("sign".equals(field) && value == JsonToken.VALUE_STRING) {
                    sign = parser.getText();
                } else {
                    parser.skipChildren();
                }
            }
            if (parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null) {
                return Optional.empty();
            }
        } catch (IOException malformed) {
            return Optional.empty();
        }
        return content == null ? Optional.empty() : Optional.of(new AlipayResponse(content, Optional.ofNullable(sign)));
    }
}
