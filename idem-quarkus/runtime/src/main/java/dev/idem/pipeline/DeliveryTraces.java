package dev.idem.pipeline;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.ContextKey;
import io.opentelemetry.context.Scope;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A span per delivery, {@code idem <scope>}, where the service traces (it has Quarkus' OpenTelemetry
 * extension); otherwise nothing, at no cost. The span is a child of whatever is current when the
 * delivery enters the pipeline (the HTTP server span, the Kafka record's); its attributes say what
 * became of it and, for a duplicate, which trace did the work. Never the key itself (it may carry a
 * user's data), only the start of its hash, and never a body.
 */
@ApplicationScoped
public class DeliveryTraces {

    static final AttributeKey<String> SCOPE = AttributeKey.stringKey("idem.scope");
    static final AttributeKey<String> KEY_HASH = AttributeKey.stringKey("idem.key.hash");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("idem.outcome");
    static final AttributeKey<String> ANSWERED_BY = AttributeKey.stringKey("idem.answered_by");
    static final AttributeKey<Long> GROUP_SIZE = AttributeKey.longKey("idem.group.size");
    static final AttributeKey<String> FIRST_TRACE = AttributeKey.stringKey("idem.first.trace_id");

    /**
     * Several traces entering one call (a Kafka poll's records): each delivery's span links to them
     * instead of taking one of them as its parent.
     */
    private static final ContextKey<List<SpanContext>> MIXED = ContextKey.named("idem.mixed-traces");

    /** Traces nothing: for a service without a tracer, and the test kit. */
    static final DeliveryTraces NONE = new DeliveryTraces((Tracer) null);

    private final Tracer tracer;

    /**
     * Quarkus' tracer when the service has one that exports: with {@code quarkus.otel.sdk.disabled}
     * its tracer still makes spans, which go nowhere, so none are made here either.
     */
    @Inject
    DeliveryTraces(Instance<Tracer> tracers, @ConfigProperty(name = "quarkus.otel.sdk.disabled", defaultValue = "false")
                   boolean disabled) {
        this(tracers.isResolvable() && !disabled ? tracers.get() : null);
    }

    private DeliveryTraces(Tracer tracer) {
        this.tracer = tracer;
    }

    /** A delivery of {@code request} enters the pipeline now. */
    DeliverySpan start(IdemRequest request) {
        if (tracer == null) {
            return DeliverySpan.NONE;
        }
        Context parent = Context.current();
        SpanBuilder builder = tracer.spanBuilder("idem " + request.scope()).setAttribute(SCOPE, request.scope());
        List<SpanContext> mixed = parent.get(MIXED);
        if (mixed != null) {
            builder.setNoParent();
            mixed.forEach(builder::addLink);
        } else {
            builder.setParent(parent);
        }
        Span span = builder.startSpan();
        if (span.isRecording()) {
            // hashed only for a span that is kept: one sampled out records nothing
            span.setAttribute(KEY_HASH, keyHash(request.key()));
        }
        return new DeliverySpan(span);
    }

    /**
     * Runs {@code call}, which starts deliveries, in the traces of {@code parents} (the Kafka
     * records they came in): their spans are children of the one parent, or linked to each of
     * several, since one transaction then mixes traces.
     */
    public static <T> T within(List<Context> parents, Supplier<T> call) {
        if (parents.isEmpty()) {
            return call.get();
        }
        Context context = parents.size() == 1 ? parents.get(0)
                : Context.current().with(MIXED, parents.stream().map(c -> Span.fromContext(c).getSpanContext())
                        .filter(SpanContext::isValid).toList());
        try (Scope ignored = context.makeCurrent()) {
            return call.get();
        }
    }

    /**
     * {@code call}, to be run later (a poll's next round), in the trace that is current now: the
     * deliveries it starts belong where the ones started now do.
     */
    static <T> Supplier<T> inThisTrace(Supplier<T> call) {
        return Context.current().wrapSupplier(call);
    }

    /** The first 16 hex characters of the key's SHA-256: enough to find it, nothing of what it says. */
    static String keyHash(String key) {
        return IdemRequest.digest(key.getBytes(StandardCharsets.UTF_8)).substring(0, 16);
    }

    /** One delivery's span; {@link #NONE} where nothing is traced. */
    static final class DeliverySpan {

        static final DeliverySpan NONE = new DeliverySpan(null);

        private final Span span;

        private DeliverySpan(Span span) {
            this.span = span;
        }

        /** The trace id, kept with the key's record by the delivery that does the work; null when not traced. */
        String traceId() {
            return span == null || !span.getSpanContext().isValid() ? null : span.getSpanContext().getTraceId();
        }

        /** The W3C {@code traceparent} of this delivery, for what its work sends on (an outbox event); null when not traced. */
        String traceparent() {
            if (traceId() == null) {
                return null;
            }
            SpanContext context = span.getSpanContext();
            return "00-" + context.getTraceId() + "-" + context.getSpanId() + "-" + context.getTraceFlags().asHex();
        }

        /** Runs {@code call} with this span current, so that what the work traces is its child. */
        <T> T current(Supplier<T> call) {
            if (span == null) {
                return call.get();
            }
            try (Scope ignored = span.makeCurrent()) {
                return call.get();
            }
        }

        /** It shares a transaction with {@code deliveries - 1} others. */
        void grouped(int deliveries) {
            if (span != null) {
                span.setAttribute(GROUP_SIZE, (long) deliveries);
            }
        }

        /** What became of it, and whether the cache answered. */
        void end(Outcome outcome, boolean byCache) {
            if (span == null) {
                return;
            }
            if (!span.isRecording()) {
                span.end();
                return;
            }
            span.setAttribute(OUTCOME, outcome.name().toLowerCase(java.util.Locale.ROOT));
            span.setAttribute(ANSWERED_BY, byCache ? "redis" : "postgres");
            firstTrace(outcome).ifPresent(first -> span.setAttribute(FIRST_TRACE, first));
            span.end();
        }

        /** Its transaction failed: nothing took effect. Only the failure's kind: its message may quote data. */
        void failed(Throwable failure) {
            if (span != null) {
                span.setStatus(StatusCode.ERROR, failure.getClass().getSimpleName());
                span.end();
            }
        }

        private static Optional<String> firstTrace(Outcome outcome) {
            return outcome instanceof Outcome.Duplicate duplicate ? duplicate.firstTraceId() : Optional.empty();
        }
    }
}
