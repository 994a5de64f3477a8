package dev.idem.pipeline;

import io.vertx.core.json.JsonObject;
import java.time.Instant;

/**
 * The hold one process has on a two-phase record: attempt number {@code attempt}, valid until
 * {@code until}. Every later write of the holder (confirm, failure) is a compare-and-set on both,
 * so a holder whose record was taken over meanwhile changes nothing.
 */
record Lease(IdemRequest request, JsonObject payload, Instant until, int attempt) {
}
