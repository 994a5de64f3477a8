package dev.idem.pipeline.kafka;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.smallrye.reactive.messaging.TracingMetadata;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The traces Kafka records came in: the context the connector's tracing gave a record, or else the
 * W3C {@code traceparent} its producer put in its headers. Records without either add nothing.
 */
final class RecordTraces {

    private RecordTraces() {}

    static List<Context> of(List<? extends Message<?>> records) {
        List<Context> traces = new ArrayList<>(records.size());
        for (Message<?> record : records) {
            of(record).ifPresent(traces::add);
        }
        return traces;
    }

    private static Optional<Context> of(Message<?> record) {
        Optional<Context> traced = record.getMetadata(TracingMetadata.class)
                .map(TracingMetadata::getCurrentContext)
                .filter(context -> Span.fromContext(context).getSpanContext().isValid());
        if (traced.isPresent()) {
            return traced;
        }
        return record.getMetadata(IncomingKafkaRecordMetadata.class)
                .filter(kafka -> kafka.getHeaders().lastHeader("traceparent") != null)
                .map(kafka -> W3CTraceContextPropagator.getInstance().extract(Context.root(), kafka.getHeaders(), HEADERS))
                .filter(context -> Span.fromContext(context).getSpanContext().isValid());
    }

    private static final TextMapGetter<Headers> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Headers headers) {
            List<String> keys = new ArrayList<>();
            headers.forEach(header -> keys.add(header.key()));
            return keys;
        }

        @Override
        public String get(Headers headers, String key) {
            Header header = headers == null ? null : headers.lastHeader(key);
            return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
        }
    };
}
