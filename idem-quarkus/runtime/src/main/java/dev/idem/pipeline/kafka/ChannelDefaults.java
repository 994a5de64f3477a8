package dev.idem.pipeline.kafka;

import io.quarkus.runtime.configuration.ConfigBuilder;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The settings the extension gives the channels that {@link IdempotentConsumer} applies (written
 * at build time to {@value #RESOURCE}), as a configuration source of their own below every source
 * of the service's: its {@code application.properties}, its environment and its system properties
 * all override them.
 *
 * <p>A source, not Quarkus's run-time defaults, because an environment variable can only be
 * matched with a dashed property name that some ordinary source names: with the defaults alone,
 * {@code MP_MESSAGING_INCOMING_GIFT_CARD_ISSUES_AUTO_OFFSET_RESET} read as the channel
 * {@code gift} and stopped the start.
 */
public final class ChannelDefaults implements ConfigBuilder {

    /** Where the build writes the channels' settings. */
    public static final String RESOURCE = "META-INF/idem-kafka-channel-defaults.properties";

    /** Below {@code META-INF/microprofile-config.properties} (100), above the defaults of everything else. */
    static final int ORDINAL = 50;

    @Override
    public SmallRyeConfigBuilder configBuilder(SmallRyeConfigBuilder builder) {
        Properties settings = new Properties();
        try (InputStream in = builder.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                return builder;
            }
            settings.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + RESOURCE, e);
        }
        return builder.withSources(new PropertiesConfigSource(settings, "idem Kafka channel settings", ORDINAL));
    }
}
