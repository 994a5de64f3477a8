package dev.idem.pipeline;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.Map;

/** The pipeline's configuration as a service would have it, from properties and the declared defaults. */
final class Configs {

    private Configs() {}

    static PipelineConfig pipeline(Map<String, String> properties) {
        return new SmallRyeConfigBuilder()
                .withMapping(PipelineConfig.class)
                .withConverter(Duration.class, 200, new DurationConverter()) // "26h", as Quarkus reads it
                .withSources(new PropertiesConfigSource(properties, "test", 100))
                .build()
                .getConfigMapping(PipelineConfig.class);
    }
}
