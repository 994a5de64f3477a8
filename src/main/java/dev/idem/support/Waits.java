package dev.idem.support;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;

/**
 * A wait on the caller's Vert.x context, which the continuation then runs on: a Vert.x timer,
 * where Mutiny's own delays would go on on one of its worker threads.
 */
public final class Waits {

    private Waits() {}

    /** Completes after {@code millis} (at once when not positive). */
    public static Uni<Void> after(Vertx vertx, long millis) {
        if (millis <= 0) {
            return Uni.createFrom().voidItem();
        }
        return Uni.createFrom().emitter(emitter -> vertx.setTimer(millis, id -> emitter.complete(null)));
    }
}
