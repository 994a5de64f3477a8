package dev.idem.ops;

import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.Priorities;
import jakarta.annotation.Priority;
import java.util.List;

/**
 * Traces are made where they go somewhere: unless {@code quarkus.otel.sdk.disabled} is set, it
 * follows whether an exporter is named ({@code idem.tracing.zipkin-endpoint}, or an OTLP endpoint
 * of Quarkus'). A service with neither makes no spans and pays nothing, instead of sending every
 * span to an OTLP collector at localhost that is not there and logging so every few seconds.
 */
@Priority(Priorities.APPLICATION)
public class TracingSwitch implements ConfigSourceInterceptor {

    static final String SDK_DISABLED = "quarkus.otel.sdk.disabled";
    static final List<String> EXPORTERS = List.of("idem.tracing.zipkin-endpoint",
            "quarkus.otel.exporter.otlp.traces.endpoint", "quarkus.otel.exporter.otlp.endpoint");

    @Override
    public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
        ConfigValue value = context.proceed(name);
        if (!SDK_DISABLED.equals(name) || set(value)) {
            return value;
        }
        boolean exported = EXPORTERS.stream().map(context::proceed).anyMatch(TracingSwitch::set);
        return ConfigValue.builder().withName(name).withValue(Boolean.toString(!exported)).build();
    }

    /** Set by someone: not empty, and not the default a configuration mapping declares (the lowest ordinal). */
    private static boolean set(ConfigValue value) {
        return value != null && value.getValue() != null && !value.getValue().isBlank()
                && value.getConfigSourceOrdinal() > Integer.MIN_VALUE;
    }
}
