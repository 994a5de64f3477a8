package dev.idem.examples.loyalty;

import dev.idem.pipeline.IdemRequest;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.Optional;

/** A {@code points-awards} record: give {@code points} to {@code userId}, once for {@code awardKey}. */
@RegisterForReflection
public record PointsAward(String awardKey, String userId, Integer points) {

    /** Large enough for any award, small enough that no balance can overflow a bigint. */
    static final int MAX_POINTS = 1_000_000;

    public Optional<String> violation() {
        if (awardKey == null || awardKey.isBlank() || awardKey.length() > 255) {
            return Optional.of("awardKey is required (at most 255 characters)");
        }
        if (!UserIds.valid(userId)) {
            return Optional.of("userId is required: " + UserIds.RULE);
        }
        if (points == null || points < 1 || points > MAX_POINTS) {
            return Optional.of("points is required: a whole number from 1 to " + MAX_POINTS);
        }
        return Optional.empty();
    }

    /** The same key with another user or amount is a reused key, not a duplicate. */
    IdemRequest idemRequest(String scope) {
        return new IdemRequest(scope, awardKey, IdemRequest.fingerprint(userId, points));
    }
}
