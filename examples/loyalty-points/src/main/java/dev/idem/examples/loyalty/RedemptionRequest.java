package dev.idem.examples.loyalty;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.Optional;

/** The body of {@code POST /points/redemptions}. */
@RegisterForReflection
public record RedemptionRequest(Integer points) {

    public Optional<String> violation() {
        if (points == null || points < 1 || points > PointsAward.MAX_POINTS) {
            return Optional.of("points is required: a whole number from 1 to " + PointsAward.MAX_POINTS);
        }
        return Optional.empty();
    }
}
