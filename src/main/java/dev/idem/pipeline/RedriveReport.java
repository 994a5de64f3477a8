package dev.idem.pipeline;

import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * One recovery pass over hanging two-phase records: how many it looked at, took over (and ran
 * their effect again), saw confirmed DONE, and marked FAILED. A record another process seized
 * first is examined and nothing else.
 */
public record RedriveReport(int examined, int takenOver, int done, int failed) {

    static RedriveReport of(List<Resumption> resumptions) {
        int takenOver = 0;
        int done = 0;
        int failed = 0;
        for (Resumption resumption : resumptions) {
            takenOver += resumption.takenOver() ? 1 : 0;
            done += resumption == Resumption.DONE ? 1 : 0;
            failed += resumption.failed() ? 1 : 0;
        }
        return new RedriveReport(resumptions.size(), takenOver, done, failed);
    }

    public JsonObject toJson() {
        return new JsonObject()
                .put("examined", examined)
                .put("takenOver", takenOver)
                .put("done", done)
                .put("failed", failed);
    }
}
