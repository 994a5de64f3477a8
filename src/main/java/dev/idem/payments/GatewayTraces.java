package dev.idem.payments;

import dev.idem.orders.PaymentGateway;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Spans of what idem asks of a gateway (a query, a bill's import), roots of their own traces when
 * a job starts them. What the answer makes happens inside, so a payment a
 * query found is in the query's trace down to its coupon.
 */
@ApplicationScoped
public class GatewayTraces {

    static final AttributeKey<String> GATEWAY = AttributeKey.stringKey("idem.gateway");

    /** Null where traces go nowhere: Quarkus' tracer then still makes spans (and metric exemplars naming them). */
    private final Tracer tracer;
    private final Vertx vertx;

    GatewayTraces(Tracer tracer, Vertx vertx,
                  @ConfigProperty(name = "quarkus.otel.sdk.disabled", defaultValue = "false") boolean disabled) {
        this.tracer = disabled ? null : tracer;
        this.vertx = vertx;
    }

    /**
     * {@code call} under a span named {@code name}, with the gateway's id and, once it answered,
     * the attribute {@code resultKey} set to what {@code result} makes of its answer.
     */
    public <T> Uni<T> traced(String name, PaymentGateway gateway, String resultKey, Function<? super T, String> result,
                             Supplier<Uni<T>> call) {
        if (tracer == null) {
            return call.get();
        }
        return Uni.createFrom().deferred(() -> {
            // a child of the admin request that asked for it; a trace's root when a job did
            Span span = tracer.spanBuilder(name).setAttribute(GATEWAY, gateway.id()).startSpan();
            // a context of the call's own, where the span stays current for all of it, callbacks included:
            // the job's context is shared by every order it asks about at once
            Context own = VertxContext.createNewDuplicatedContext(vertx.getOrCreateContext());
            return Uni.createFrom().<T>emitter(emitter -> own.runOnContext(ignored -> {
                        span.makeCurrent();
                        call.get().subscribe().with(emitter::complete, emitter::fail);
                    }))
                    .invoke(answer -> span.setAttribute(resultKey, result.apply(answer)))
                    .onFailure().invoke(failure -> span.setStatus(StatusCode.ERROR, failure.getClass().getSimpleName()))
                    .onTermination().invoke(span::end);
        });
    }
}
