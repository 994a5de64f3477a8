package dev.idem.pipeline.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.annotation.Nullable;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which members of a record type a record must carry. */
class RequiredMembersTest {

    record Refund(String refundId, String walletId, long amountCents, Optional<String> note, @Nullable String channel) {}

    record Line(String sku, Integer quantity) {}

    record Basket(String basketId, List<Line> lines) {}

    @Test
    void everyComponentButOptionalAndNullableOnesMustBeThere() {
        assertEquals(Optional.empty(), RequiredMembers.missing(new Refund("r-1", "w-1", 5, Optional.empty(), null)));
        assertEquals(Optional.of("member 'walletId' is missing or null"),
                RequiredMembers.missing(new Refund("r-1", null, 5, Optional.empty(), null)));
    }

    @Test
    void membersOfNestedRecordsAreNamedByTheirPath() {
        assertEquals(Optional.of("member 'lines[1].quantity' is missing or null"),
                RequiredMembers.missing(new Basket("b-1", List.of(new Line("a", 1), new Line("b", null)))));
        assertEquals(Optional.of("member 'lines' is missing or null"), RequiredMembers.missing(new Basket("b-1", null)));
    }

    @Test
    void aTypeThatIsNoRecordIsLeftToItsOwnRules() {
        assertEquals(Optional.empty(), RequiredMembers.missing(new StringBuilder()));
    }
}
