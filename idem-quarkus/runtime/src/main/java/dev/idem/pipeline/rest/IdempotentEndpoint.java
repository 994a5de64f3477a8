package dev.idem.pipeline.rest;

import io.quarkus.arc.Arc;
import io.quarkus.runtime.annotations.RecordableConstructor;
import java.util.List;
import org.jboss.resteasy.reactive.common.model.ResourceClass;
import org.jboss.resteasy.reactive.server.core.ResteasyReactiveRequestContext;
import org.jboss.resteasy.reactive.server.model.HandlerChainCustomizer;
import org.jboss.resteasy.reactive.server.model.ServerResourceMethod;
import org.jboss.resteasy.reactive.server.spi.EndpointInvoker;
import org.jboss.resteasy.reactive.server.spi.ServerRestHandler;

/**
 * One {@link Idempotent} resource method, as the build found it: Quarkus REST invokes it through
 * {@link IdempotentEndpoints} instead of directly, so that the method runs inside the pipeline
 * with the transaction's connection as its {@code SqlConnection} argument.
 */
public class IdempotentEndpoint implements HandlerChainCustomizer {

    private final String scope;
    private final boolean keyRequired;
    private final int connection;
    private final int body;
    private final int status;

    /**
     * @param connection the index of the method's {@code SqlConnection} parameter
     * @param body the index of its body parameter, or -1
     * @param status the status of an answer that is not a {@code Response}: 200, or {@code @ResponseStatus}'s
     */
    @RecordableConstructor
    public IdempotentEndpoint(String scope, boolean keyRequired, int connection, int body, int status) {
        this.scope = scope;
        this.keyRequired = keyRequired;
        this.connection = connection;
        this.body = body;
        this.status = status;
    }

    // the getters let Quarkus record the endpoint at build time for the runtime

    public String getScope() {
        return scope;
    }

    public boolean isKeyRequired() {
        return keyRequired;
    }

    public int getConnection() {
        return connection;
    }

    public int getBody() {
        return body;
    }

    public int getStatus() {
        return status;
    }

    @Override
    public ServerRestHandler alternateInvocationHandler(EndpointInvoker invoker) {
        return new Invocation(this, invoker);
    }

    /** Before the body is read, the request is marked as one of this endpoint's: its binding failures are answered as problems. */
    @Override
    public List<ServerRestHandler> handlers(Phase phase, ResourceClass resourceClass, ServerResourceMethod method) {
        return phase == Phase.AFTER_MATCH
                ? List.of(request -> request.setProperty(UnreadableBodies.ENDPOINT, scope))
                : List.of();
    }

    /** Quarkus REST's invocation step, with the method's answer coming from the pipeline. */
    private static final class Invocation implements ServerRestHandler {
        private final IdempotentEndpoint endpoint;
        private final EndpointInvoker invoker;
        private volatile IdempotentEndpoints endpoints;

        Invocation(IdempotentEndpoint endpoint, EndpointInvoker invoker) {
            this.endpoint = endpoint;
            this.invoker = invoker;
        }

        @Override
        public void handle(ResteasyReactiveRequestContext request) {
            if (request.getResult() != null) {
                return;
            }
            request.requireCDIRequestScope();
            try {
                request.setResult(endpoints().answer(endpoint, request, invoker));
            } catch (Throwable failure) {
                request.handleException(failure, true);
            }
        }

        private IdempotentEndpoints endpoints() {
            IdempotentEndpoints found = endpoints;
            if (found == null) {
                found = Arc.container().instance(IdempotentEndpoints.class).get();
                endpoints = found;
            }
            return found;
        }
    }
}
