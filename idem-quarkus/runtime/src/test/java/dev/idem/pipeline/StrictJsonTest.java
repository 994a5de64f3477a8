package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The strict reader on a type with a nested object, over a mapper that knows none of its rules. */
class StrictJsonTest {

    record Inner(String a, String b) {}

    record Outer(Inner inner, String b) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Foreign(String a) {}

    private final StrictJson json = new StrictJson(new ObjectMapper());

    private StrictJson.Parsed<Outer> read(String text) {
        return json.read(text.getBytes(StandardCharsets.UTF_8), Outer.class, outer -> Optional.empty());
    }

    @Test
    void aMemberRepeatedInANestedObjectIsNamed() {
        assertEquals(new StrictJson.Parsed.Invalid<Outer>("member 'a' appears more than once"),
                read("{\"inner\":{\"a\":\"1\",\"a\":\"2\"},\"b\":\"3\"}"));
    }

    @Test
    void aMemberRepeatedAtTheTopAfterANestedObjectIsNamed() {
        assertEquals(new StrictJson.Parsed.Invalid<Outer>("member 'b' appears more than once"),
                read("{\"b\":\"0\",\"inner\":{\"a\":\"1\",\"b\":\"2\"},\"b\":\"3\"}"));
    }

    @Test
    void oneNameInTwoObjectsIsNoRepeat() {
        assertEquals(new StrictJson.Parsed.Valid<>(new Outer(new Inner("1", "2"), "3")),
                read("{\"inner\":{\"a\":\"1\",\"b\":\"2\"},\"b\":\"3\"}"));
    }

    @Test
    void malformedJsonIsStillSaidSo() {
        assertEquals(new StrictJson.Parsed.Invalid<Outer>("the body is not well-formed JSON"),
                read("{\"inner\":{\"a\":\"1\""));
    }

    @Test
    void aTypeThatSkipsUnknownMembersKeepsEveryOtherRule() {
        assertEquals(new StrictJson.Parsed.Invalid<Outer>("unknown member 'c'"), read("{\"b\":\"1\",\"c\":2}"));
        assertEquals(new StrictJson.Parsed.Valid<>(new Foreign("1")), foreign("{\"a\":\"1\",\"c\":2}"));
        assertEquals(new StrictJson.Parsed.Invalid<Foreign>("member 'a' appears more than once"),
                foreign("{\"a\":\"1\",\"a\":\"2\"}"));
        assertEquals(new StrictJson.Parsed.Invalid<Foreign>("member 'a' has the wrong type or format: a string is expected"),
                foreign("{\"a\":1}"));
    }

    record Money(long amountCents, String currency) {}

    record Labeled(@JsonProperty(required = true) String label) {}

    @Test
    void unknownMembersAreIgnoredWhenAskedAndEveryOtherRuleHolds() {
        assertEquals(new StrictJson.Parsed.Valid<>(new Money(5, "CNY")),
                money("{\"amountCents\":5,\"currency\":\"CNY\",\"note\":{\"x\":[1]},\"extra\":true}"));
        assertEquals(new StrictJson.Parsed.Invalid<Money>("member 'amountCents' appears more than once"),
                money("{\"amountCents\":5,\"amountCents\":6,\"currency\":\"CNY\"}"));
        assertEquals(new StrictJson.Parsed.Invalid<Money>(
                        "member 'amountCents' has the wrong type or format: a whole number is expected"),
                money("{\"amountCents\":\"5\",\"currency\":\"CNY\"}"));
    }

    @Test
    void aMissingNumberIsSaidToBeMissingNotMistyped() {
        assertEquals(new StrictJson.Parsed.Invalid<Money>("member 'amountCents' is missing or null"),
                money("{\"currency\":\"CNY\"}"));
        assertEquals(new StrictJson.Parsed.Invalid<Money>("member 'amountCents' is missing or null"),
                money("{\"amountCents\":null,\"currency\":\"CNY\"}"));
    }

    @Test
    void aMemberRequiredByItsAnnotationIsNamedWhenMissing() {
        assertEquals(new StrictJson.Parsed.Invalid<Labeled>("member 'label' is missing"),
                json.read("{}".getBytes(StandardCharsets.UTF_8), Labeled.class, labeled -> Optional.empty()));
    }

    private StrictJson.Parsed<Money> money(String text) {
        return json.read(text.getBytes(StandardCharsets.UTF_8), Money.class, StrictJson.UnknownMembers.IGNORED,
                money -> Optional.empty());
    }

    private StrictJson.Parsed<Foreign> foreign(String text) {
        return json.read(text.getBytes(StandardCharsets.UTF_8), Foreign.class, foreign -> Optional.empty());
    }
}
