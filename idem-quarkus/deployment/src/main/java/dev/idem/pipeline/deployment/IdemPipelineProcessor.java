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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.DotName;
import org.jboss.logging.Logger;

/** The extension's build: its beans, and the mistakes that must stop a build rather than a delivery. */
class IdemPipelineProcessor {

    static final String FEATURE = "idem-pipeline";
    static final String MIGRATIONS = "db/idem";

    private static final Logger LOG = Logger.getLogger(IdemPipelineProcessor.class);
    private static final String PACKAGE = "dev.idem.pipeline.";
    private static final DotName TWO_PHASE_WORK = DotName.createSimple(PACKAGE + "TwoPhaseWork");
    private static final DotName TWO_PHASE_SCOPE = DotName.createSimple(PACKAGE + "TwoPhaseScope");

    /** The feature; and a word when the service's Flyway would not create the pipeline's tables. */
    @BuildStep
    FeatureBuildItem feature(Capabilities capabilities) {
        checkMigrations(capabilities);
        return new FeatureBuildItem(FEATURE);
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
                        PACKAGE + "kafka.DispositionPolicy$Default",
                        PACKAGE + "kafka.DeadLetterTopic",
                        PACKAGE + "kafka.DeadLetterProducer",
                        PACKAGE + "HangingRecords",
                        PACKAGE + "DedupJobs",
                        PACKAGE + "DedupArchive",
                        PACKAGE + "RetentionCheck",
                        PACKAGE + "GroupCommit",
                        PACKAGE + "GroupTransaction",
                        PACKAGE + "IdempotentBatch",
                        PACKAGE + "PgDedupStore",
                        PACKAGE + "RedisCache",
                        PACKAGE + "LoopRedis",
                        PACKAGE + "LoopRedis$DefaultOptions",
                        PACKAGE + "PipelineMetrics",
                        PACKAGE + "TwoPhaseHandlers",
                        PACKAGE + "ClockProducer")
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

    /** The tables come as a Flyway migration of their own location, which the service's Flyway must read. */
    private static void checkMigrations(Capabilities capabilities) {
        if (!capabilities.isPresent(Capability.FLYWAY)) {
            LOG.infof("No Flyway in this service: create the pipeline's tables from %s/*.sql in the runtime jar",
                    MIGRATIONS);
            return;
        }
        List<String> locations = ConfigProvider.getConfig()
                .getOptionalValues("quarkus.flyway.locations", String.class)
                .orElse(List.of("db/migration"));
        boolean read = locations.stream()
                .map(l -> l.startsWith("classpath:") ? l.substring("classpath:".length()) : l)
                .anyMatch(MIGRATIONS::equals);
        if (!read) {
            LOG.warnf("quarkus.flyway.locations (%s) does not include %s: the pipeline's tables will not be created",
                    String.join(",", locations), MIGRATIONS);
        }
    }
}
