package dev.idem.pipeline;

import dev.idem.pipeline.RedisGuard.PreCheck;
import io.vertx.core.json.JsonObject;

/**
 * How what a delivery meets becomes its outcome: the answer Redis held, the row another delivery
 * committed, or the effect of its own work. One set of rules for single and batched deliveries.
 */
final class Verdicts {

    private Verdicts() {}

    /** DONE in Redis: a duplicate, or the key reused with other content. */
    static Outcome ofRedis(IdemRequest request, PreCheck.Done done) {
        return done.fingerprint().equals(request.fingerprint())
                ? new Outcome.Duplicate(Layer.REDIS, done.result())
                : new Outcome.KeyReused();
    }

    /** A committed row that another delivery wrote: same payload or not, finished or not. */
    static Outcome ofExisting(IdemRequest request, DedupRecord existing, Outcome inFlight) {
        if (!existing.fingerprint().equals(request.fingerprint())) {
            return new Outcome.KeyReused();
        }
        return switch (existing.status()) {
            case DONE -> new Outcome.Duplicate(Layer.DB, existing.result());
            case PROCESSING -> inFlight;
            case FAILED -> failedForGood();
        };
    }

    /** The outcome of a delivery whose work ran with {@code effect}. */
    static Outcome ofEffect(Effect effect) {
        if (effect instanceof Effect.Applied applied) {
            return new Outcome.Processed(applied.result());
        }
        if (effect instanceof Effect.AlreadyApplied already) {
            return new Outcome.Duplicate(Layer.STATE, already.result());
        }
        if (effect instanceof Effect.Anomalous anomalous) {
            return new Outcome.Anomaly(anomalous.kind(), anomalous.result());
        }
        Effect.Refused refused = (Effect.Refused) effect;
        return new Outcome.Rejected(refused.reason(), refused.detail());
    }

    /** What the key keeps as its result after {@code effect}; null when nothing is to be kept (refused). */
    static JsonObject stored(Effect effect) {
        if (effect instanceof Effect.Applied applied) {
            return applied.result();
        }
        if (effect instanceof Effect.AlreadyApplied already) {
            return already.result();
        }
        if (effect instanceof Effect.Anomalous anomalous) {
            return anomalous.result();
        }
        return null;
    }

    /** Another delivery holds the key, or it must be tried again: come back after the configured pause. */
    static Outcome inFlight(PipelineConfig config) {
        return new Outcome.InFlight(config.inFlightRetryAfter());
    }

    static Outcome failedForGood() {
        return new Outcome.Rejected("FAILED", "the work for this key failed for good");
    }
}
