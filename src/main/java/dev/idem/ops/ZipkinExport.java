package dev.idem.ops;

import io.opentelemetry.exporter.zipkin.ZipkinSpanExporter;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.quarkus.arc.lookup.LookupUnlessProperty;
import io.quarkus.logging.Log;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Spans to a Zipkin server when {@code idem.tracing.zipkin-endpoint} names one. Quarkus batches the
 * spans of every exporter bean, so a slow or absent Zipkin costs a delivery nothing but a dropped
 * span; such a bean takes the place of Quarkus' OTLP export, so traces go to one or the other.
 */
@ApplicationScoped
class ZipkinExport {

    @Produces
    @Singleton
    @LookupUnlessProperty(name = "idem.tracing.zipkin-endpoint", stringValue = "", lookupIfMissing = false)
    SpanExporter zipkin(OpsConfig config) {
        String endpoint = config.tracing().zipkinEndpoint().orElseThrow().toString();
        Log.infof("traces are sent to Zipkin at %s", endpoint);
        return ZipkinSpanExporter.builder().setEndpoint(endpoint).build();
    }
}
