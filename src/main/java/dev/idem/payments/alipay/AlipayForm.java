package dev.idem.payments.alipay;

import dev.idem.pipeline.StrictJson.Parsed;
import java.net.URLDecoder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A notification's form body, {@code application/x-www-form-urlencoded} in the charset its own
 * {@code charset} parameter names (UTF-8 when absent). A parameter given twice is refused: which
 * copy was signed and which would be booked could differ.
 */
record AlipayForm(SortedMap<String, String> parameters, Charset charset) {

    static final String SIGN = "sign";
    static final String SIGN_TYPE = "sign_type";

    static Parsed<AlipayForm> parse(byte[] body) {
        if (body == null || body.length == 0) {
            return new Parsed.Invalid<>("the body is empty");
        }
        for (byte b : body) {
            if (b < 0x20 || b > 0x7e) {
                return new Parsed.Invalid<>("the body must be URL-encoded ASCII");
            }
        }
        List<Encoded> pairs = new ArrayList<>();
        String charsetName = null;
        for (String pair : new String(body, StandardCharsets.US_ASCII).split("&")) {
            if (!pair.isEmpty()) {
                int eq = pair.indexOf('=');
                Encoded encoded = eq < 0
                        ? new Encoded(pair, "")
                        : new Encoded(pair.substring(0, eq), pair.substring(eq + 1));
                pairs.add(encoded);
                charsetName = "charset".equals(encoded.name()) ? encoded.value() : charsetName;
            }
        }
        Optional<Charset> charset = charset(charsetName);
        if (charset.isEmpty()) {
            return new Parsed.Invalid<>("charset names no supported character set");
        }
        TreeMap<String, String> decoded = new TreeMap<>();
        try {
            for (Encoded pair : pairs) {
                String name = URLDecoder.decode(pair.name(), charset.get());
                if (decoded.putIfAbsent(name, URLDecoder.decode(pair.value(), charset.get())) != null) {
                    return new Parsed.Invalid<>("parameter '" + name + "' appears more than once");
                }
            }
        } catch (IllegalArgumentException badEscape) {
            return new Parsed.Invalid<>("the body is not well-formed URL encoding");
        }
        return new Parsed.Valid<>(new AlipayForm(Collections.unmodifiableSortedMap(decoded), charset.get()));
    }

    private record Encoded(String name, String value) {}

    Optional<String> get(String name) {
        return Optional.ofNullable(parameters.get(name));
    }

    /**
     * What Alipay signed: every parameter but {@code sign} and {@code sign_type}, those with an
     * empty value left out, sorted by name, decoded, joined as {@code k=v&k=v}, in the form's charset.
     */
    byte[] signedContent() {
        return parameters.entrySet().stream()
                .filter(p -> !SIGN.equals(p.getKey()) && !SIGN_TYPE.equals(p.getKey()) && !p.getValue().isEmpty())
                .map(p -> p.getKey() + "=" + p.getValue())
                .collect(Collectors.joining("&"))
                .getBytes(charset);
    }

    private static Optional<Charset> charset(String encodedName) {
        if (encodedName == null || encodedName.isEmpty()) {
            return Optional.of(StandardCharsets.UTF_8);
        }
        try {
            String name = URLDecoder.decode(encodedName, StandardCharsets.US_ASCII);
            return Charset.isSupported(name) ? Optional.of(Charset.forName(name)) : Optional.empty();
        } catch (IllegalArgumentException unknownOrIllegalName) {
            return Optional.empty();
        }
    }
}
