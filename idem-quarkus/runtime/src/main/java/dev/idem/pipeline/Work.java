package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.util.Optional;
import java.util.function.Function;

/** The business change a key guards; it runs on the pipeline's connection, inside its transaction. */
@FunctionalInterface
public interface Work {
    /**
     * Makes the change through {@code tx}, the pipeline's connection, inside the transaction that
     * records the key: every statement goes through it, and nothing else is done (the pipeline may
     * run a work again when its transaction had to be run again). Answers what happened.
     */
    Uni<Effect> run(SqlConnection tx);

    /**
     * Begins the work on {@code tx}: its statements built (a Uni sends nothing until subscribed),
     * and its effect if it is known before they answer, so that the key's record can go out right
     * behind them, in the same round trip. By default the effect is the answer of {@link #run}.
     */
    default Begun begin(SqlConnection tx) {
        return new Begun.Running(run(tx));
    }

    /**
     * A change whose effect is known before it runs: applied, with {@code result}, once its
     * statements succeed (an order created under a new key, say). The pipeline then sends the
     * key's record right behind it instead of waiting for its answer: one round trip less.
     */
    static Work applying(JsonObject result, Function<SqlConnection, Uni<Void>> change) {
        return new Known(new Effect.Processed(result), change);
    }

    /**
     * The W3C {@code traceparent} of the delivery whose work was given {@code tx}, when the service
     * traces: what a work sends on keeps it (an outbox event, say), so that whoever applies that
     * next continues the delivery's trace. Empty for a connection the pipeline did not give.
     */
    static Optional<String> traceparent(SqlConnection tx) {
        return WatchedConnection.traceparent(tx);
    }

    /** A work of {@link #applying}: its effect, and the statements that make it so. */
    record Known(Effect effect, Function<SqlConnection, Uni<Void>> change) implements Work {
        @Override
        public Uni<Effect> run(SqlConnection tx) {
            return change.apply(tx).replaceWith(effect);
        }

        @Override
        public Begun begin(SqlConnection tx) {
            return new Begun.Answered(effect, change.apply(tx));
        }
    }

    /** A work begun by {@link #begin}, its statements not sent yet. */
    sealed interface Begun {
        /** Its effect is known: it holds once {@code statements} succeed. */
        record Answered(Effect effect, Uni<?> statements) implements Begun {}

        /** Its effect is what {@code effect} answers. */
        record Running(Uni<Effect> effect) implements Begun {}
    }
}
