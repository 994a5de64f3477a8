package dev.idem.pipeline;

import io.vertx.core.json.JsonObject;
import java.time.Instant;

/** A row of {@code dedup_record}: what is known about one key. */
record DedupRecord(
        String scope,
        String key,
        String fingerprint,
        Status status,
        JsonObject result,
        int attempts,
        Instant leaseUntil,
        Instant createdAt,
        Instant updatedAt,
        Instant expiresAt) {

    enum Status { PROCESSING, DONE, FAILED }
}
