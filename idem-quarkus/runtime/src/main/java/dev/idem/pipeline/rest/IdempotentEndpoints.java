package dev.idem.pipeline.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.pipeline.Effect;
import dev.idem.pipeline.IdemRequest;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Outcome;
import dev.idem.pipeline.PipelineConfig;
import dev.idem.pipeline.Work;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.core.ResteasyReactiveRequestContext;
import org.jboss.resteasy.reactive.server.spi.EndpointInvoker;

/**
 * The Idempotency-Key protocol around {@link Idempotent} methods: the key and the caller read and
 * checked, the method run as the pipeline's work with the transaction's connection, its answer
 * stored with the key's record, and each outcome answered (replayed, or by {@link ProblemAnswers}).
 */
@ApplicationScoped
class IdempotentEndpoints {

    static final String REPLAYED = "Idempotent-Replayed";

    private static final Pattern KEY = Pattern.compile("[\\x20-\\x7E]{1,255}");

    /**
     * Refusals that say the request itself is wrong (400: malformed; 401, 403: the caller's
     * credentials) or that it came at the wrong moment (408, 429): like those made before the
     * method runs, they are not the key's answer, and a corrected or later request with the key
     * runs. Every other answer of 400 to 499 (402, 404, 409, 422, ...) is the work's decision.
     */
    static final Set<Integer> NOT_THE_KEYS_ANSWER = Set.of(400, 401, 403, 408, 429);

    private final IdempotencyPipeline pipeline;
    private final PipelineConfig.Http config;
    private final ProblemAnswers answers;
    private final RequestFingerprint fingerprint;
    private final ObjectMapper mapper;

    IdempotentEndpoints(IdempotencyPipeline pipeline, PipelineConfig config, ProblemAnswers answers,
                        RequestFingerprint fingerprint, ObjectMapper mapper) {
        this.pipeline = pipeline;
        this.config = config.http();
        this.answers = answers;
        this.fingerprint = fingerprint;
        this.mapper = mapper;
    }

    /** The answer to {@code request} of {@code endpoint}, whose method {@code invoker} calls. */
    Uni<Response> answer(IdempotentEndpoint endpoint, ResteasyReactiveRequestContext request, EndpointInvoker invoker) {
        Object[] arguments = request.getParameters();
        String header = config.keyHeader();
        String key = request.serverRequest().getRequestHeader(header);
        if (key == null) {
            return endpoint.isKeyRequired() ? now(answers.keyMissing(header))
                    : invoke(invoker, request, arguments).map(item -> plain(endpoint, item));
        }
        if (!KEY.matcher(key).matches()) {
            return now(answers.keyInvalid(header));
        }
        String caller;
        if (config.callerHeader().isPresent()) {
            caller = request.serverRequest().getRequestHeader(config.callerHeader().get());
            if (caller == null || caller.isBlank()) {
                return now(answers.callerMissing(config.callerHeader().get()));
            }
        } else {
            Principal user = request.getSecurityContext().getUserPrincipal();
            caller = user == null || user.getName().isEmpty() ? null : user.getName();
        }
        String query = request.serverRequest().query();
        String target = request.getPath() + (query == null ? "" : "?" + query);
        Object body = endpoint.getBody() >= 0 ? arguments[endpoint.getBody()] : null;
        IdemRequest idem = new IdemRequest(endpoint.getScope(), keyOf(caller, key),
                fingerprint.of(endpoint.getScope(), request.getMethod(), target, body));
        return pipeline.execute(idem, new MethodWork(endpoint, request, invoker, arguments))
                .map(outcome -> outcome.accept(answered))
                .onFailure(pipeline::isTransient).recoverWithItem(answers::unavailable)
                .onFailure(Failed.class).recoverWithItem(failed -> ((Failed) failed).answer);
    }

    /** The method as the pipeline's work; begun with its answer when it returned a {@link KnownAnswer} of a success. */
    private final class MethodWork implements Work {
        private final IdempotentEndpoint endpoint;
        private final ResteasyReactiveRequestContext request;
        private final EndpointInvoker invoker;
        private final Object[] arguments;

        MethodWork(IdempotentEndpoint endpoint, ResteasyReactiveRequestContext request, EndpointInvoker invoker,
                   Object[] arguments) {
            this.endpoint = endpoint;
            this.request = request;
            this.invoker = invoker;
            this.arguments = arguments;
        }

        @Override
        public Begun begin(SqlConnection tx) {
            arguments[endpoint.getConnection()] = tx;
            Uni<Object> returned = call(invoker, request, arguments);
            if (returned instanceof KnownAnswer<?> known && status(endpoint, known.answer()) < 400) {
                return new Begun.Answered(effect(endpoint, request, known.answer()), known.statements());
            }
            return new Begun.Running(refusals(returned).map(item -> effect(endpoint, request, item)));
        }

        @Override
        public Uni<Effect> run(SqlConnection tx) {
            arguments[endpoint.getConnection()] = tx;
            return invoke(invoker, request, arguments).map(item -> effect(endpoint, request, item));
        }
    }

    /** The method's own Uni, with {@link #refusals}. */
    private static Uni<Object> invoke(EndpointInvoker invoker, ResteasyReactiveRequestContext request, Object[] arguments) {
        return refusals(call(invoker, request, arguments));
    }

    /** The method's own Uni; what it throws becomes the Uni's failure. */
    @SuppressWarnings("unchecked")
    private static Uni<Object> call(EndpointInvoker invoker, ResteasyReactiveRequestContext request, Object[] arguments) {
        try {
            Object returned = invoker.invoke(request.getEndpointInstance(), arguments);
            return returned == null ? Uni.createFrom().nullItem() : (Uni<Object>) returned;
        } catch (Exception thrown) {
            return Uni.createFrom().failure(thrown);
        }
    }

    /** A refusal thrown as a {@link WebApplicationException} of 400 to 499 is the method's answer, as if returned. */
    private static Uni<Object> refusals(Uni<Object> answer) {
        return answer.onFailure(IdempotentEndpoints::refusal)
                .recoverWithItem(thrown -> ((WebApplicationException) thrown).getResponse());
    }

    private static boolean refusal(Throwable thrown) {
        return thrown instanceof WebApplicationException refused && refused.getResponse() != null
                && refused.getResponse().getStatus() >= 400 && refused.getResponse().getStatus() < 500;
    }

    /**
     * What the method answered, as the key's answer: a success, or a refusal (400 to 499), which
     * rolls back what the method wrote and is replayed all the same; but for a refusal of the
     * request itself or of the moment ({@link #NOT_THE_KEYS_ANSWER}), which keeps the key free. An
     * answer of 500 or more is a failure, as if thrown: nothing is stored, and it goes out as it is.
     */
    private Effect effect(IdempotentEndpoint endpoint, ResteasyReactiveRequestContext request, Object item) {
        Response response = response(item);
        int status = status(endpoint, item);
        if (status >= 500) {
            throw new Failed(response != null ? response : Response.status(status).entity(item).build());
        }
        JsonObject stored = stored(endpoint, request, item, response, status);
        return status >= 400
                ? new Effect.Rejected("HTTP_" + status, "the endpoint answered " + status, stored,
                        !NOT_THE_KEYS_ANSWER.contains(status))
                : new Effect.Processed(stored);
    }

    private static Response response(Object item) {
        return item instanceof Response r ? r : item instanceof RestResponse<?> r ? r.toResponse() : null;
    }

    /** The status the method's answer {@code item} goes out with. */
    private static int status(IdempotentEndpoint endpoint, Object item) {
        Response response = response(item);
        return response != null ? response.getStatus() : item == null ? 204 : endpoint.getStatus();
    }

    /** An answer as JSON: its status, body bytes, {@code Content-Type} and the headers of {@code replayed-headers}. */
    private JsonObject stored(IdempotentEndpoint endpoint, ResteasyReactiveRequestContext request, Object item,
                              Response response, int status) {
        JsonObject stored = new JsonObject().put("status", status);
        Object entity = response != null ? response.getEntity() : item;
        if (entity != null) {
            MediaType type = response != null && response.getMediaType() != null ? response.getMediaType()
                    : produced(request);
            byte[] bytes;
            if (entity instanceof byte[] raw) {
                bytes = raw;
                type = type != null ? type : MediaType.APPLICATION_OCTET_STREAM_TYPE;
            } else if (entity instanceof String text) {
                bytes = text.getBytes(StandardCharsets.UTF_8);
                type = type != null ? type : MediaType.TEXT_PLAIN_TYPE;
            } else {
                bytes = json(entity);
                type = type != null && type.isCompatible(MediaType.APPLICATION_JSON_TYPE) ? type
                        : MediaType.APPLICATION_JSON_TYPE;
            }
            stored.put("type", type.toString());
            String text = utf8(bytes);
            if (text != null) {
                stored.put("body", text);
            } else {
                stored.put("body64", Base64.getEncoder().encodeToString(bytes));
            }
        }
        if (response != null) {
            JsonObject headers = new JsonObject();
            for (String name : config.replayedHeaders()) {
                List<String> values = response.getStringHeaders().get(name);
                if (values != null && !values.isEmpty()) {
                    headers.put(name, new JsonArray(List.copyOf(values)));
                }
            }
            if (!headers.isEmpty()) {
                stored.put("headers", headers);
            }
        }
        return stored;
    }

    /** The one concrete type the method {@code @Produces}, if it names one. */
    private static MediaType produced(ResteasyReactiveRequestContext request) {
        var produces = request.getTarget().getProduces();
        if (produces == null || produces.getSortedMediaTypes().length != 1) {
            return null;
        }
        MediaType type = produces.getSortedMediaTypes()[0];
        return type.isWildcardType() || type.isWildcardSubtype() ? null : type;
    }

    private byte[] json(Object entity) {
        try {
            return mapper.writeValueAsBytes(entity);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the answer of an @Idempotent method cannot be written as JSON: "
                    + entity.getClass().getName(), e);
        }
    }

    private static String utf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException binary) {
            return null;
        }
    }

    /** A stored answer, as it was first given; {@code replayed} marks a later request's copy. */
    static Response replay(JsonObject stored, boolean replayed) {
        Response.ResponseBuilder answer = Response.status(stored.getInteger("status"));
        Object body = stored.getValue("body");
        if (body instanceof String text) {
            answer.entity(text.getBytes(StandardCharsets.UTF_8)).type(stored.getString("type"));
        } else if (body instanceof JsonObject || body instanceof JsonArray) {
            // an answer stored as JSON itself, before answers were stored as their bytes
            answer.entity(((body instanceof JsonObject o) ? o.encode() : ((JsonArray) body).encode())
                    .getBytes(StandardCharsets.UTF_8)).type(MediaType.APPLICATION_JSON_TYPE);
        } else if (stored.containsKey("body64")) {
            answer.entity(Base64.getDecoder().decode(stored.getString("body64"))).type(stored.getString("type"));
        }
        JsonObject headers = stored.getJsonObject("headers");
        if (headers != null) {
            headers.forEach(header -> ((JsonArray) header.getValue()).forEach(value -> answer.header(header.getKey(), value)));
        }
        if (replayed) {
            answer.header(REPLAYED, "true");
        }
        return answer.build();
    }

    /** The answer of a request that went past the pipeline (no key, where none is required). */
    private static Response plain(IdempotentEndpoint endpoint, Object item) {
        if (item instanceof Response response) {
            return response;
        }
        if (item instanceof RestResponse<?> response) {
            return response.toResponse();
        }
        return item == null ? Response.noContent().build() : Response.status(endpoint.getStatus()).entity(item).build();
    }

    /** Keys are per caller: the caller is encoded so that no (caller, key) pair can pose as another. */
    static String keyOf(String caller, String key) {
        return caller == null ? key : URLEncoder.encode(caller, StandardCharsets.UTF_8) + ":" + key;
    }

    private static Uni<Response> now(Response response) {
        return Uni.createFrom().item(response);
    }

    /**
     * The method answered 500 or more: to the pipeline a failed work (nothing stored, the
     * transaction rolled back), to the client the method's own answer, past the service's mappers.
     */
    private static final class Failed extends RuntimeException {
        private final transient Response answer;

        Failed(Response answer) {
            super("the endpoint answered " + answer.getStatus(), null, false, false);
            this.answer = answer;
        }
    }

    /** Each outcome as an HTTP answer. */
    private final Outcome.Cases<Response> answered = new Outcome.Cases<>() {
        public Response processed(Outcome.Processed o) {
            return replay(o.result(), false);
        }

        public Response duplicate(Outcome.Duplicate o) {
            return replay(o.result(), true);
        }

        public Response inFlight(Outcome.InFlight o) {
            return answers.inFlight(o.retryAfter());
        }

        public Response keyReused(Outcome.KeyReused o) {
            return answers.keyReused();
        }

        public Response anomaly(Outcome.Anomaly o) {
            return answers.anomaly(o);
        }

        /** The method's own refusal, as it answered it (again, when replayed); else the database's. */
        public Response rejected(Outcome.Rejected o) {
            return o.result().containsKey("status") ? replay(o.result(), o.replayed()) : answers.rejected(o);
        }
    };
}
