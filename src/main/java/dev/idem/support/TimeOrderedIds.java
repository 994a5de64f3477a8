package dev.idem.support;

import java.time.Clock;
import java.util.UUID;

/**
 * Ids the service makes (orders, coupons) as version 7 UUIDs (RFC 9562): the millisecond first,
 * then 74 random bits. Made in time order, their rows and the keys derived from them
 * ({@code paid:<orderId>}) go to the right edge of each B-tree instead of a random page, which a
 * large table would have to read, and write whole to the WAL after every checkpoint.
 */
public final class TimeOrderedIds {

    private TimeOrderedIds() {}

    public static String next(Clock clock) {
        // the random bits of a version 4 UUID (and its variant), under the millisecond and version 7
        UUID random = UUID.randomUUID();
        long most = (clock.millis() << 16) | 0x7000L | (random.getMostSignificantBits() & 0x0FFFL);
        return new UUID(most, random.getLeastSignificantBits()).toString();
    }
}
