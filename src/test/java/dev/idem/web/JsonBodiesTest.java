package dev.idem.web;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The strict reader on a type with a nested object, which none of the service's bodies has yet. */
class JsonBodiesTest {

    record Inner(String a, String b) {}

    record Outer(Inner inner, String b) {}

    private final JsonBodies bodies = new JsonBodies(strictMapper());

    private static ObjectMapper strictMapper() {
        ObjectMapper mapper = new ObjectMapper();
        new StrictJackson().customize(mapper);
        return mapper;
    }

    private JsonBodies.Parsed<Outer> read(String json) {
        return bodies.read(json.getBytes(StandardCharsets.UTF_8), Outer.class, outer -> Optional.empty());
    }

    @Test
    void aMemberRepeatedInANestedObjectIsNamed() {
        assertEquals(new JsonBodies.Parsed.Invalid<Outer>("member 'a' appears more than once"),
                read("{\"inner\":{\"a\":\"1\",\"a\":\"2\"},\"b\":\"3\"}"));
    }

    @Test
    void aMemberRepeatedAtTheTopAfterANestedObjectIsNamed() {
        assertEquals(new JsonBodies.Parsed.Invalid<Outer>("member 'b' appears more than once"),
                read("{\"b\":\"0\",\"inner\":{\"a\":\"1\",\"b\":\"2\"},\"b\":\"3\"}"));
    }

    @Test
    void oneNameInTwoObjectsIsNoRepeat() {
        assertEquals(new JsonBodies.Parsed.Valid<>(new Outer(new Inner("1", "2"), "3")),
                read("{\"inner\":{\"a\":\"1\",\"b\":\"2\"},\"b\":\"3\"}"));
    }

    @Test
    void malformedJsonIsStillSaidSo() {
        assertEquals(new JsonBodies.Parsed.Invalid<Outer>("the body is not well-formed JSON"),
                read("{\"inner\":{\"a\":\"1\""));
    }
}
