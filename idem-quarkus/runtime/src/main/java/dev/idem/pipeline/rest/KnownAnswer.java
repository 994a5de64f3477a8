package dev.idem.pipeline.rest;

import dev.idem.pipeline.Statement;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.operators.AbstractUni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.util.List;
import java.util.Objects;

/**
 * An {@link Idempotent} method's answer known before its statements answer: an order whose id the
 * service makes, say. The pipeline sends the statements, the key's record and the COMMIT in one
 * write, instead of waiting for the statements' answers first:
 * <pre>{@code
 * Order order = Order.create(request);
 * return KnownAnswer.after(tx, order, Statement.of(INSERT, Tuple.of(order.id(), ...)));
 * }</pre>
 * The statements are given as such, not as a Uni, because all of them must be sent before the
 * COMMIT: one that waited for another's answer would go out after it. If one fails, nothing
 * commits and the request is answered as the database's failure of any method is
 * ({@code INVALID_DATA}, {@code UNIQUE_VIOLATION}, 503); a refusal is decided before the answer,
 * and returned as one. An answer of 400 or more is not taken ahead: it waits for the statements,
 * as it does outside the pipeline (no key, with {@code keyRequired = false}: sent on {@code tx}).
 *
 * @param <T> the answer: a body, a {@code Response} or a {@code RestResponse}, as the method returns
 */
public final class KnownAnswer<T> extends AbstractUni<T> {

    private final SqlConnection tx;
    private final T answer;
    private final List<Statement> statements;

    private KnownAnswer(SqlConnection tx, T answer, List<Statement> statements) {
        this.tx = tx;
        this.answer = answer;
        this.statements = statements;
    }

    /** {@code answer}, once {@code statements} succeed on {@code tx}, the method's connection. */
    public static <T> Uni<T> after(SqlConnection tx, T answer, Statement... statements) {
        return new KnownAnswer<>(tx, answer, List.of(statements));
    }

    T answer() {
        return answer;
    }

    List<Statement> statements() {
        return statements;
    }

    @Override
    public void subscribe(UniSubscriber<? super T> subscriber) {
        Uni<T> sent = tx == null
                ? Uni.createFrom().failure(new IllegalStateException("KnownAnswer sends its statements on the "
                        + "method's SqlConnection, which is null without an Idempotency-Key: send them yourself there"))
                : Statement.allOn(tx, statements).replaceWith(answer);
        AbstractUni.subscribe(sent, subscriber);
    }
}
