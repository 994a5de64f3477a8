package dev.idem.ops;

import io.opentelemetry.exporter.zipkin.ZipkinSpanExporter;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.quarkus.logging.Log;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

/**
 * Spans to a Zipkin server as well, when {@code idem.tracing.zipkin-endpoint} names one: Quarkus
 * adds every span processor bean to its tracer, beside its OTLP export. Batched, so that a slow or
 * absent Zipkin costs a delivery nothing but a dropped span.
 */
@ApplicationScoped
class ZipkinExport {

    @Produces
    @ApplicationScoped
    SpanProcessor zipkin(OpsConfig config) {
        return config.tracing().zipkinEndpoint().<SpanProcessor>map(endpoint -> {
            Log.infof("traces are sent to Zipkin at %s", endpoint);
            return BatchSpanProcessor.builder(ZipkinSpanExporter.builder().setEndpoint(endpoint.toString()).build()).build();
        }).orElseGet(SpanProcessor::composite);
    }
}
