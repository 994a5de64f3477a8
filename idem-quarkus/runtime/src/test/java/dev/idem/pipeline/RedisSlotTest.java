package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class RedisSlotTest {

    /** The slots `CLUSTER KEYSLOT` answers for these keys. */
    @Test
    void slotsAreThoseRedisClusterComputes() {
        assertEquals(12182, RedisSlot.of("foo"));
        assertEquals(5061, RedisSlot.of("bar"));
        assertEquals(6964, RedisSlot.of("idem:payment-callback:T-1:SUCCESS"));
        assertEquals(12739, RedisSlot.of("123456789"));
    }

    @Test
    void aHashTagDecidesTheSlotUnlessItIsEmpty() {
        assertEquals(3443, RedisSlot.of("{user1000}.following"));
        assertEquals(3443, RedisSlot.of("{user1000}.followers"));
        assertEquals(3443, RedisSlot.of("user1000"));
        // the first "{" and the next "}" enclose nothing: the whole key is hashed
        assertEquals(6479, RedisSlot.of("{}bar"));
        assertEquals(8363, RedisSlot.of("foo{}{bar}"));
    }

    @Test
    void keysAreGroupedBySlotInTheirOrder() {
        assertEquals(List.of(List.of(0, 2), List.of(1)), RedisSlot.groups(List.of("{a}1", "{b}1", "{a}2")));
    }
}
