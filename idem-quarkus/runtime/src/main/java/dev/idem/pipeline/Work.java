package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.util.List;
import java.util.Optional;

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
     * Begins the work on {@code tx}: by default it runs ({@link #run}), and its effect is what that
     * answers. A work whose effect is known ahead answers its effect and its statements instead:
     * the pipeline sends them, and the key's record and the COMMIT right behind them, in one write.
     */
    default Begun begin(SqlConnection tx) {
        return new Begun.Running(run(tx));
    }

    /**
     * A change whose effect is known before it runs: applied, with {@code result}, once its
     * statements succeed (an order created under a new key, say). The pipeline sends them, the
     * key's record and the COMMIT at once, without waiting for their answers: one round trip less.
     */
    static Work applying(JsonObject result, Statement... statements) {
        return new Known(new Effect.Processed(result), List.of(statements));
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
    record Known(Effect effect, List<Statement> statements) implements Work {
        @Override
        public Uni<Effect> run(SqlConnection tx) {
            return Statement.allOn(tx, statements).replaceWith(effect);
        }

        @Override
        public Begun begin(SqlConnection tx) {
            return new Begun.Answered(effect, statements);
        }
    }

    /** A work begun by {@link #begin}. */
    sealed interface Begun {
        /** Its effect is known: it holds once {@code statements}, sent together by the pipeline, succeed. */
        record Answered(Effect effect, List<Statement> statements) implements Begun {
            public Answered {
                statements = List.copyOf(statements);
            }
        }

        /** Its effect is what {@code effect} answers. */
        record Running(Uni<Effect> effect) implements Begun {}
    }
}
