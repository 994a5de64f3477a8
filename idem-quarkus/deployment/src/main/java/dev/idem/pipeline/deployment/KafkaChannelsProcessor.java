package dev.idem.pipeline.deployment;

import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import dev.idem.pipeline.kafka.ChannelDefaults;
import io.quarkus.deployment.builditem.CombinedIndexBuildItem;
import io.quarkus.deployment.builditem.GeneratedResourceBuildItem;
import io.quarkus.deployment.builditem.RunTimeConfigBuilderBuildItem;
import io.quarkus.deployment.builditem.nativeimage.NativeImageResourceBuildItem;
import io.quarkus.deployment.logging.LogCleanupFilterBuildItem;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTarget;
import org.jboss.jandex.ClassInfo;
import org.jboss.jandex.DotName;
import org.jboss.jandex.FieldInfo;
import org.jboss.jandex.IndexView;
import org.jboss.jandex.MethodInfo;

/**
 * The Kafka channels of {@code @Incoming} methods whose bean uses {@code IdempotentConsumer}: the
 * extension gives each the settings the pipeline's guarantees need, in a configuration source
 * below the service's own ({@link ChannelDefaults}), and refuses at build time a setting that
 * would break them. What stays the service's own is the channel's topic and group.
 */
class KafkaChannelsProcessor {

    private static final DotName INCOMING = DotName.createSimple("org.eclipse.microprofile.reactive.messaging.Incoming");
    private static final DotName INCOMINGS = DotName.createSimple("org.eclipse.microprofile.reactive.messaging.Incomings");
    private static final DotName CONSUMER = DotName.createSimple("dev.idem.pipeline.kafka.IdempotentConsumer");
    private static final String SESSION_TIMEOUT = "session.timeout.ms";
    private static final String HEARTBEAT_INTERVAL = "heartbeat.interval.ms";

    /**
     * What every such channel gets unless it says otherwise, and why:
     * offsets committed only for records acked after their effect committed (throttled), with a
     * record's age never marking the channel dead (it waits for as long as the database is away);
     * poison to {@code <topic>-dlq} through the extension's one shared producer; a 100 ms poll
     * timeout, since the connector's graceful close sleeps twice the poll timeout per consumer;
     * commits every second, which bounds what a crash redelivers; a new group reads from the start
     * of the topic, so that nothing sent before its first start is skipped; a consumer whose process
     * died is given up by the broker after 6 s (the least a broker allows by default) instead of 45,
     * so that an instance killed and started again consumes its partitions within seconds, and the
     * others take them over as soon.
     */
    static final Map<String, String> DEFAULTS = defaults();

    private static Map<String, String> defaults() {
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put("commit-strategy", "throttled");
        defaults.put("throttled.unprocessed-record-max-age.ms", "0");
        defaults.put("failure-strategy", "idem-dead-letter");
        defaults.put("enable.auto.commit", "false");
        defaults.put("auto.offset.reset", "earliest");
        defaults.put("poll-timeout", "100");
        defaults.put("auto.commit.interval.ms", "1000");
        defaults.put(SESSION_TIMEOUT, "6000");
        defaults.put(HEARTBEAT_INTERVAL, "2000");
        return defaults;
    }

    /** Failure strategies that never drop a record: it goes to a topic, or stops the channel. */
    private static final Set<String> KEEPING = Set.of("idem-dead-letter", "dead-letter-queue", "delayed-retry-topic", "fail");

    @BuildStep
    void channelDefaults(CombinedIndexBuildItem index, BuildProducer<GeneratedResourceBuildItem> resources,
                         BuildProducer<NativeImageResourceBuildItem> nativeResources,
                         BuildProducer<RunTimeConfigBuilderBuildItem> builders) {
        Set<String> channels = idempotentChannels(index.getIndex());
        Config config = ConfigProvider.getConfig();
        List<String> broken = new ArrayList<>();
        Properties settings = new Properties();
        for (String channel : channels) {
            String prefix = "mp.messaging.incoming." + channel + ".";
            DEFAULTS.forEach((key, value) -> settings.setProperty(prefix + key, value));
            if (setting(config, prefix + "group.protocol").or(() -> setting(config, "kafka.group.protocol"))
                    .filter("consumer"::equalsIgnoreCase).isPresent()) {
                // the broker keeps a consumer's session under that protocol: the client may not set it
                settings.remove(prefix + SESSION_TIMEOUT);
                settings.remove(prefix + HEARTBEAT_INTERVAL);
            }
            // the channel's topic, which is the channel's name unless configured, and -dlq
            settings.setProperty(prefix + "dead-letter-queue.topic", "${" + prefix + "topic:" + channel + "}-dlq");
            setting(config, prefix + "enable.auto.commit")
                    .filter(Boolean::parseBoolean)
                    .ifPresent(on -> broken.add(prefix + "enable.auto.commit=true commits offsets before their records are "
                            + "applied, so a crash loses them: remove it (the extension sets false)"));
            setting(config, prefix + "commit-strategy")
                    .filter(strategy -> !strategy.equals("throttled"))
                    .ifPresent(strategy -> broken.add(prefix + "commit-strategy=" + strategy + " can commit the offset of "
                            + "a record not yet applied (the pipeline applies partitions side by side): remove it (the "
                            + "extension sets throttled)"));
            setting(config, prefix + "failure-strategy")
                    .filter(strategy -> !KEEPING.contains(strategy))
                    .ifPresent(strategy -> broken.add(prefix + "failure-strategy=" + strategy + " drops the records it "
                            + "is given: remove it (the extension sets idem-dead-letter, which sends them to the "
                            + "dead-letter topic)"));
        }
        if (!broken.isEmpty()) {
            throw new IllegalStateException("These settings break the delivery guarantees of channels that "
                    + "IdempotentConsumer applies:\n  " + String.join("\n  ", broken));
        }
        if (!channels.isEmpty()) {
            resources.produce(new GeneratedResourceBuildItem(ChannelDefaults.RESOURCE, propertiesFile(settings)));
            nativeResources.produce(new NativeImageResourceBuildItem(ChannelDefaults.RESOURCE));
            builders.produce(new RunTimeConfigBuilderBuildItem(ChannelDefaults.class.getName()));
        }
    }

    /** {@code settings} as a properties file, without the date {@link Properties#store} writes, so that a build is repeatable. */
    private static byte[] propertiesFile(Properties settings) {
        StringWriter out = new StringWriter();
        try {
            settings.store(out, null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString().lines().filter(line -> !line.startsWith("#")).sorted()
                .collect(Collectors.joining("\n", "", "\n")).getBytes(StandardCharsets.ISO_8859_1);
    }

    /**
     * The connector warns at every start that it will not check the age of unprocessed records: the
     * channels above set that age to 0 on purpose, so the warning goes to DEBUG.
     */
    @BuildStep
    LogCleanupFilterBuildItem deliberateRecordAge() {
        return new LogCleanupFilterBuildItem("io.smallrye.reactive.messaging.kafka", "SRMSG18235");
    }

    /** The channels of {@code @Incoming} methods in beans that inject {@code IdempotentConsumer}. */
    static Set<String> idempotentChannels(IndexView index) {
        Set<String> channels = new TreeSet<>();
        List<AnnotationInstance> incoming = new ArrayList<>(index.getAnnotations(INCOMING));
        for (AnnotationInstance repeated : index.getAnnotations(INCOMINGS)) {
            for (AnnotationInstance one : repeated.value().asNestedArray()) {
                incoming.add(AnnotationInstance.create(INCOMING, repeated.target(), one.values()));
            }
        }
        for (AnnotationInstance annotation : incoming) {
            if (annotation.target().kind() == AnnotationTarget.Kind.METHOD
                    && usesConsumer(annotation.target().asMethod().declaringClass())) {
                channels.add(annotation.value().asString());
            }
        }
        return channels;
    }

    private static boolean usesConsumer(ClassInfo bean) {
        for (FieldInfo field : bean.fields()) {
            if (field.type().name().equals(CONSUMER)) {
                return true;
            }
        }
        for (MethodInfo method : bean.methods()) {
            if (method.parameterTypes().stream().anyMatch(type -> type.name().equals(CONSUMER))) {
                return true;
            }
        }
        return false;
    }

    private static Optional<String> setting(Config config, String name) {
        return config.getOptionalValue(name, String.class);
    }
}
