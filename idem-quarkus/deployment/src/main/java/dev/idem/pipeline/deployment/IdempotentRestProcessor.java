package dev.idem.pipeline.deployment;

import dev.idem.pipeline.rest.IdempotentEndpoint;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.builditem.AdditionalIndexedClassesBuildItem;
import io.quarkus.deployment.builditem.CombinedIndexBuildItem;
import io.quarkus.deployment.builditem.RunTimeConfigurationDefaultBuildItem;
import io.quarkus.resteasy.reactive.server.spi.MethodScannerBuildItem;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTarget;
import org.jboss.jandex.AnnotationValue;
import org.jboss.jandex.ClassInfo;
import org.jboss.jandex.ClassType;
import org.jboss.jandex.DotName;
import org.jboss.jandex.MethodInfo;
import org.jboss.jandex.MethodParameterInfo;
import org.jboss.jandex.ParameterizedType;
import org.jboss.jandex.Type;
import org.jboss.resteasy.reactive.common.processor.EndpointIndexer;
import org.jboss.resteasy.reactive.server.core.parameters.NullParamExtractor;
import org.jboss.resteasy.reactive.server.core.parameters.ParameterExtractor;
import org.jboss.resteasy.reactive.server.model.HandlerChainCustomizer;
import org.jboss.resteasy.reactive.server.processor.scanning.MethodScanner;

/**
 * {@code @Idempotent} resource methods: Quarkus REST invokes each through the pipeline, with the
 * transaction's connection for its {@code SqlConnection} parameter. A method that cannot work so
 * stops the build with what to change.
 */
class IdempotentRestProcessor {

    static final DotName IDEMPOTENT = DotName.createSimple("dev.idem.pipeline.rest.Idempotent");
    private static final DotName SQL_CONNECTION = DotName.createSimple("io.vertx.mutiny.sqlclient.SqlConnection");
    private static final DotName UNI = DotName.createSimple("io.smallrye.mutiny.Uni");
    private static final DotName RESPONSE = DotName.createSimple("jakarta.ws.rs.core.Response");
    private static final DotName RESPONSE_STATUS = DotName.createSimple("org.jboss.resteasy.reactive.ResponseStatus");
    private static final Set<String> HTTP_METHODS = Set.of("GET", "POST", "PUT", "PATCH", "DELETE");
    /** Set in a method's scanning context when one of its parameters is a {@code SqlConnection}. */
    private static final String TAKES_CONNECTION = IdempotentRestProcessor.class.getName() + ".connection";
    /** A concurrent copy of a request waits this long for the first, then is answered 409. */
    static final String CONCURRENT_WAIT = "200ms";

    @BuildStep
    AdditionalBeanBuildItem beans() {
        return AdditionalBeanBuildItem.builder()
                .addBeanClasses(
                        "dev.idem.pipeline.rest.IdempotentEndpoints",
                        "dev.idem.pipeline.rest.ProblemAnswers",
                        "dev.idem.pipeline.rest.MethodPathBody",
                        "dev.idem.pipeline.rest.UnreadableBodies")
                .setUnremovable()
                .build();
    }

    /** Its exception mappers are found in the index, as a service's own are. */
    @BuildStep
    AdditionalIndexedClassesBuildItem indexed() {
        return new AdditionalIndexedClassesBuildItem("dev.idem.pipeline.rest.UnreadableBodies");
    }

    @BuildStep
    MethodScannerBuildItem idempotentMethods() {
        return new MethodScannerBuildItem(new MethodScanner() {
            @Override
            public ParameterExtractor handleCustomParameter(Type type, Map<DotName, AnnotationInstance> annotations,
                                                            boolean field, Map<String, Object> context) {
                if (field || !type.name().equals(SQL_CONNECTION)) {
                    return null;
                }
                context.put(TAKES_CONNECTION, true);
                // every answer is a Response the extension builds: its writer is chosen by the answer
                context.put(EndpointIndexer.METHOD_CONTEXT_CUSTOM_RETURN_TYPE_KEY,
                        ParameterizedType.create(UNI, new Type[] {ClassType.create(RESPONSE)}, null));
                // the argument is the transaction's connection, set by IdempotentEndpoint
                return new NullParamExtractor();
            }

            @Override
            public List<HandlerChainCustomizer> scan(MethodInfo method, ClassInfo endpoint, Map<String, Object> context) {
                AnnotationInstance idempotent = method.declaredAnnotation(IDEMPOTENT);
                if (idempotent == null) {
                    if (context.containsKey(TAKES_CONNECTION)) {
                        throw new IllegalStateException(where(method) + " takes a SqlConnection, which only @Idempotent "
                                + "methods are given (the transaction that records the request's key). Annotate it "
                                + "@Idempotent(scope = \"...\"), or take the Pool and open a transaction yourself.");
                    }
                    return List.of();
                }
                return List.of(endpoint(method, idempotent));
            }
        });
    }

    /**
     * Each scope of an {@code @Idempotent} endpoint answers a concurrent copy of a request 409
     * after {@value #CONCURRENT_WAIT}, as the Idempotency-Key draft asks, unless configured
     * otherwise; and {@code @Idempotent} on anything but a resource method stops the build, since
     * it would do nothing there.
     */
    @BuildStep
    void scopes(CombinedIndexBuildItem index, BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults) {
        Set<String> scopes = new TreeSet<>();
        List<String> misplaced = new ArrayList<>();
        for (AnnotationInstance idempotent : index.getIndex().getAnnotations(IDEMPOTENT)) {
            if (idempotent.target().kind() != AnnotationTarget.Kind.METHOD
                    || idempotent.target().asMethod().annotations().stream()
                            .noneMatch(a -> a.name().prefix() != null && a.name().prefix().toString().equals("jakarta.ws.rs")
                                    && HTTP_METHODS.contains(a.name().local()))) {
                misplaced.add(idempotent.target().toString());
            } else {
                scopes.add(idempotent.value("scope").asString());
            }
        }
        if (!misplaced.isEmpty()) {
            throw new IllegalStateException("@Idempotent makes Quarkus REST resource methods (@POST, @PUT, @PATCH, "
                    + "@DELETE, @GET) idempotent, and does nothing elsewhere: " + misplaced + ". Other entry points call "
                    + "IdempotencyPipeline.execute, or IdempotentConsumer for Kafka.");
        }
        for (String scope : scopes) {
            String name = scope.contains(".") ? "\"" + scope + "\"" : scope;
            defaults.produce(new RunTimeConfigurationDefaultBuildItem(
                    "idem.pipeline.scopes." + name + ".concurrent-wait", CONCURRENT_WAIT));
        }
    }

    private static IdempotentEndpoint endpoint(MethodInfo method, AnnotationInstance idempotent) {
        if (!method.returnType().name().equals(UNI)) {
            throw new IllegalStateException(where(method) + " is @Idempotent and must return a Uni (of its answer): "
                    + "its work runs in the pipeline's reactive transaction.");
        }
        int connection = -1;
        int body = -1;
        for (MethodParameterInfo parameter : method.parameters()) {
            if (parameter.type().name().equals(SQL_CONNECTION)) {
                connection = parameter.position();
            } else if (body < 0 && isBody(parameter)) {
                body = parameter.position();
            }
        }
        if (connection < 0) {
            throw new IllegalStateException(where(method) + " is @Idempotent and must take a "
                    + "io.vertx.mutiny.sqlclient.SqlConnection parameter, and send its statements through it: that is "
                    + "the transaction in which the request's key is recorded with what the method changes.");
        }
        AnnotationInstance responseStatus = method.declaredAnnotation(RESPONSE_STATUS);
        AnnotationValue keyRequired = idempotent.value("keyRequired");
        return new IdempotentEndpoint(idempotent.value("scope").asString(),
                keyRequired == null || keyRequired.asBoolean(), connection, body,
                responseStatus == null ? 200 : responseStatus.value().asInt());
    }

    /** The entity parameter: one that no JAX-RS annotation binds and whose type is not the runtime's own. */
    private static boolean isBody(MethodParameterInfo parameter) {
        boolean bound = parameter.declaredAnnotations().stream().map(a -> a.name().toString())
                .anyMatch(name -> name.startsWith("jakarta.ws.rs.") || name.startsWith("org.jboss.resteasy.reactive."));
        String type = parameter.type().name().toString();
        boolean context = type.startsWith("jakarta.ws.rs.") || type.startsWith("org.jboss.resteasy.reactive.")
                || type.startsWith("io.quarkus.")
                || type.startsWith("io.vertx.") && !type.contains(".buffer.") && !type.contains(".json.");
        return !bound && !context;
    }

    private static String where(MethodInfo method) {
        return method.declaringClass().name() + "." + method.name();
    }
}
