package dev.idem.support;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.UUID;

/**
 * Ids the service makes (orders, coupons) as version 7 UUIDs (RFC 9562): the millisecond first,
 * then 74 random bits. Made in time order, their rows and the keys derived from them
 * ({@code paid:<orderId>}) go to the right edge of each B-tree instead of a random page, which a
 * large table would have to read, and write whole to the WAL after every checkpoint.
 */
public final class TimeOrderedIds {

    private static final SecureRandom RANDOM = new SecureRandom();

    private TimeOrderedIds() {}

    public static String next(Clock clock) {
        long millis = clock.millis();
        long random = RANDOM.nextLong();
        long most = (millis << 16) | 0x7000L | ((random >>> 52) & 0x0FFFL);
        long least = (RANDOM.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(most, least).toString();
    }
}
