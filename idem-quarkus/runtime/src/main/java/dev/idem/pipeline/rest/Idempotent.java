package dev.idem.pipeline.rest;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a Quarkus REST resource method idempotent by its {@code Idempotency-Key} header (the IETF
 * draft "The Idempotency-Key HTTP Header Field", as Stripe answers it). The method does the
 * business work and nothing else:
 *
 * <pre>{@code
 * @POST
 * @Path("/redeem")
 * @Idempotent(scope = "gift-card-redeem")
 * public Uni<Redemption> redeem(RedeemRequest request, SqlConnection tx) {
 *     return cards.redeem(tx, request);          // every statement through tx
 * }
 * }</pre>
 *
 * <p>The method takes a {@link io.vertx.mutiny.sqlclient.SqlConnection} parameter: the pipeline's
 * transaction, in which the key's record commits together with what the method writes through it.
 * It returns a {@code Uni}: of the body (answered 200, or the status of {@code @ResponseStatus}),
 * or of a {@code Response} / {@code RestResponse} (its status, body and the headers named by
 * {@code idem.pipeline.http.replayed-headers}). That answer is stored and every later request with
 * the key gets it again, byte for byte, with {@code Idempotent-Replayed: true}.
 *
 * <p>The extension answers the rest, as RFC 9457 problem+json with a {@code code} member (a
 * service changes any of them with a bean extending {@link ProblemAnswers}):
 * <ul>
 * <li>no key: 400 {@code IDEMPOTENCY_KEY_MISSING}; a key that is not 1 to 255 printable ASCII
 * characters: 400 {@code IDEMPOTENCY_KEY_INVALID};</li>
 * <li>the key of a request still being processed: 409 {@code IDEMPOTENCY_KEY_IN_FLIGHT} with
 * {@code Retry-After};</li>
 * <li>the key used before with another request (method, path or body): 422
 * {@code IDEMPOTENCY_KEY_REUSED};</li>
 * <li>the database unreachable: 503 {@code UNAVAILABLE} with {@code Retry-After}; nothing took effect.</li>
 * </ul>
 * An answer of 400 or more from the method, or a failure of its {@code Uni}, is not stored: what
 * the method wrote rolls back, the key stays free, and the answer (or the exception, through the
 * service's exception mappers) goes to the client as it is. The method may run more than once for
 * one request (its transaction is run again when it shared one with a conflicting request), so it
 * must not act outside {@code tx}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Idempotent {

    /**
     * The scope of the keys: one per endpoint, such as {@code "gift-card-redeem"}. Keys are unique
     * within a scope and, when {@code idem.pipeline.http.caller-header} is set or the request is
     * authenticated, within the caller.
     */
    String scope();

    /**
     * Whether a request without the key is refused (400 {@code IDEMPOTENCY_KEY_MISSING}). When
     * false, such a request runs the method once, outside the pipeline, with a {@code null}
     * connection: the method then keeps its own guard (a one-time token, say).
     */
    boolean keyRequired() default true;
}
