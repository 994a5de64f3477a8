package dev.idem.pipeline.rest;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.operators.AbstractUni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import java.util.Objects;

/**
 * An {@link Idempotent} method's answer known before its statements answer: an order whose id the
 * service makes, say. The key's record then goes to the database right behind the statements, in
 * the same round trip, instead of after their answer:
 * <pre>{@code
 * Order order = Order.create(request);
 * return KnownAnswer.after(orders.insert(tx, order), order);
 * }</pre>
 * If the statements fail, nothing commits and the request is answered as the database's failure of
 * any method is ({@code INVALID_DATA}, {@code UNIQUE_VIOLATION}, 503); a refusal is decided before
 * the answer, and returned as one. An answer of 400 or more is not taken ahead: it waits for the
 * statements, as {@code statements.replaceWith(answer)} does, which is also what this Uni is
 * outside the pipeline (no key, with {@code keyRequired = false}).
 *
 * @param <T> the answer: a body, a {@code Response} or a {@code RestResponse}, as the method returns
 */
public final class KnownAnswer<T> extends AbstractUni<T> {

    private final Uni<?> statements;
    private final T answer;

    private KnownAnswer(Uni<?> statements, T answer) {
        this.statements = Objects.requireNonNull(statements, "statements");
        this.answer = answer;
    }

    /** {@code answer}, once {@code statements} (sent through the method's {@code SqlConnection}) succeed. */
    public static <T> Uni<T> after(Uni<?> statements, T answer) {
        return new KnownAnswer<>(statements, answer);
    }

    Uni<?> statements() {
        return statements;
    }

    T answer() {
        return answer;
    }

    @Override
    public void subscribe(UniSubscriber<? super T> subscriber) {
        AbstractUni.subscribe(statements.replaceWith(answer), subscriber);
    }
}
