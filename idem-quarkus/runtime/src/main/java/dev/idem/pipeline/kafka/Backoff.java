package dev.idem.pipeline.kafka;

import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * The one backoff of the Kafka side, for records applied again (the database away, the key in
 * flight elsewhere, a failing work) and dead letters sent again: 200 ms, doubling, at most 10 s,
 * each give or take a quarter so that the retries of many records do not come back together.
 */
final class Backoff {

    private static final long FIRST_MILLIS = 200;
    private static final long LONGEST_MILLIS = 10_000;

    private Backoff() {}

    /** How long to wait before retry number {@code retry} (1: the first). */
    static Duration delay(int retry) {
        long base = FIRST_MILLIS << Math.min(Math.max(retry - 1, 0), 6);
        long capped = Math.min(base, LONGEST_MILLIS);
        return Duration.ofMillis(capped - capped / 4 + ThreadLocalRandom.current().nextLong(capped / 2 + 1));
    }

    /** {@code next}, once the delay before retry number {@code retry} passed. */
    static <T> Uni<T> retry(int retry, Supplier<Uni<T>> next) {
        return Uni.createFrom().voidItem().onItem().delayIt().by(delay(retry)).chain(ignored -> next.get());
    }
}
