package dev.idem.pipeline.deployment;

import dev.idem.pipeline.kafka.ConsumersCloseFirst;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem.ValidationErrorBuildItem;
import io.quarkus.arc.processor.BeanInfo;
import io.quarkus.deployment.Capabilities;
import io.quarkus.deployment.Capability;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.builditem.FeatureBuildItem;
import io.quarkus.deployment.builditem.RunTimeConfigurationDefaultBuildItem;
import io.quarkus.deployment.builditem.ShutdownListenerBuildItem;
import io.quarkus.deployment.builditem.nativeimage.NativeImageResourceBuildItem;
import io.quarkus.deployment.logging.LogCleanupFilterBuildItem;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.DotName;

/** The extension's build: its beans, and the mistakes that must stop a build rather than a delivery. */
class IdemPipelineProcessor {

    static final String FEATURE = "idem-pipeline";
    static final String MIGRATIONS = "db/idem";

    private static final String PACKAGE = "dev.idem.pipeline.";
    private static final DotName TWO_PHASE_WORK = DotName.createSimple(PACKAGE + "TwoPhaseWork");
    private static final DotName TWO_PHASE_SCOPE = DotName.createSimple(PACKAGE + "TwoPhaseScope");

    @BuildStep
    FeatureBuildItem feature() {
        return new FeatureBuildItem(FEATURE);
    }

    /**
     * Who puts the pipeline's tables in place: the service's Flyway when it reads {@value #MIGRATIONS}
     * (the script is a repeatable migration there), else the extension itself at start-up
     * ({@code PipelineTables}), with no Flyway or JDBC driver needed.
     */
    @BuildStep
    void tables(Capabilities capabilities, BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults,
                BuildProducer<NativeImageResourceBuildItem> resources) {
        defaults.produce(new RunTimeConfigurationDefaultBuildItem("idem.pipeline.create-tables",
                String.valueOf(!flywayReadsMigrations(capabilities))));
        resources.produce(new NativeImageResourceBuildItem(MIGRATIONS + "/R__idem_pipeline_tables.sql"));
    }

    /**
     * The runtime's beans, and its qualifier (indexed with them, so that CDI knows it is one); the
     * public beans stay even when the service has not injected them yet.
     */
    @BuildStep
    AdditionalBeanBuildItem beans() {
        return AdditionalBeanBuildItem.builder()
                .addBeanClasses(
                        PACKAGE + "TwoPhaseScope",
                        PACKAGE + "IdempotencyPipeline",
                        PACKAGE + "DedupAdmin",
                        PACKAGE + "StrictJson",
                        PACKAGE + "kafka.IdempotentConsumer",
                        PACKAGE + "kafka.RecordReader",
                        PACKAGE + "kafka.DispositionPolicy$Default",
                        PACKAGE + "kafka.DeadLetterTopic",
                        PACKAGE + "kafka.DeadLetterProducer",
                        PACKAGE + "HangingRecords",
                        PACKAGE + "DedupArchive",
                        PACKAGE + "RetentionCheck",
                        PACKAGE + "CacheFirst",
                        PACKAGE + "OnePhase",
                        PACKAGE + "DeliveryTraces",
                        PACKAGE + "GroupCommit",
                        PACKAGE + "PollRounds",
                        PACKAGE + "TwoPhase",
                        PACKAGE + "PgDedupStore",
                        PACKAGE + "PgDedupRecords",
                        PACKAGE + "RedisCache",
                        PACKAGE + "LoopRedis",
                        PACKAGE + "LoopRedis$DefaultOptions",
                        PACKAGE + "PipelineMetrics",
                        PACKAGE + "TwoPhaseHandlers",
                        PACKAGE + "ClockProducer",
                        PACKAGE + "PipelineTables")
                .setUnremovable()
                .build();
    }

    /** The Kafka channels close before the database pool, so that their last records can finish. */
    @BuildStep
    ShutdownListenerBuildItem consumersCloseFirst() {
        return new ShutdownListenerBuildItem(new ConsumersCloseFirst());
    }

    /**
     * The recovery and archiving jobs are scheduled at start-up, not declared with
     * {@code @Scheduled}: Quarkus starts its scheduler only for declared jobs unless told otherwise.
     */
    @BuildStep
    RunTimeConfigurationDefaultBuildItem schedulerStarts() {
        return new RunTimeConfigurationDefaultBuildItem("quarkus.scheduler.start-mode", "forced");
    }

    /**
     * Quarkus warns at every start that the default Redis client's pool gauges are registered twice.
     * They are, but by Quarkus alone: both {@code RedisClientProcessor} and {@code RedisDatasourceProcessor}
     * record {@code RedisClientRecorder.initialize}, and each call builds a Vert.x client for the name
     * before {@code putIfAbsent} keeps the first one; the second client's pool is never used and its
     * gauges are the ones dropped, so the gauges that stay measure the client that serves. The extension
     * needs the default client in every service (LoopRedis), so the warning goes to DEBUG, where
     * Micrometer puts every duplicate after the first anyway. Quarkus without the extension warns the
     * same; a named client of the service's own is left alone.
     */
    @BuildStep
    LogCleanupFilterBuildItem defaultRedisPoolMadeTwice() {
        return new LogCleanupFilterBuildItem("io.micrometer.core.instrument.MeterRegistry",
                "This Gauge has been already registered (MeterId{name='redis.pool.queue.size', "
                        + "tags=[tag(pool.name=<default>),tag(pool.type=redis)]})");
    }

    /**
     * Every {@code TwoPhaseWork} names its scope with {@code @TwoPhaseScope}, and no scope has two:
     * the pipeline could not tell which one completes (or recovers) a record.
     */
    @BuildStep
    void twoPhaseWorks(ValidationPhaseBuildItem validation, BuildProducer<ValidationErrorBuildItem> errors) {
        Map<String, List<BeanInfo>> byScope = new HashMap<>();
        List<Throwable> problems = new ArrayList<>();
        for (BeanInfo bean : validation.getContext().beans().withBeanType(TWO_PHASE_WORK)) {
            Optional<AnnotationInstance> scope = bean.getQualifiers().stream()
                    .filter(q -> q.name().equals(TWO_PHASE_SCOPE))
                    .findFirst();
            if (scope.isEmpty()) {
                problems.add(new IllegalStateException("The two-phase work " + bean + " must name its scope with "
                        + "@TwoPhaseScope(\"...\")"));
            } else {
                byScope.computeIfAbsent(scope.get().value().asString(), s -> new ArrayList<>()).add(bean);
            }
        }
        byScope.forEach((scope, beans) -> {
            if (beans.size() > 1) {
                problems.add(new IllegalStateException("Two-phase scope \"" + scope + "\" has " + beans.size()
                        + " works, it must have one: " + beans));
            }
        });
        if (!problems.isEmpty()) {
            errors.produce(new ValidationErrorBuildItem(problems));
        }
    }

    private static boolean flywayReadsMigrations(Capabilities capabilities) {
        if (!capabilities.isPresent(Capability.FLYWAY)) {
            return false;
        }
        List<String> locations = ConfigProvider.getConfig()
                .getOptionalValues("quarkus.flyway.locations", String.class)
                .orElse(List.of("db/migration"));
        return locations.stream()
                .map(l -> l.startsWith("classpath:") ? l.substring("classpath:".length()) : l)
                .anyMatch(MIGRATIONS::equals);
    }
}
