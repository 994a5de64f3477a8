package dev.idem.pipeline.kafka;

import dev.idem.pipeline.PipelineConfig;
import dev.idem.pipeline.StrictJson;
import dev.idem.pipeline.StrictJson.Parsed;
import dev.idem.pipeline.StrictJson.UnknownMembers;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validator;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * How a Kafka record's value becomes the type its work takes, as a consumer must read while its
 * producers evolve: a member the type does not declare is ignored (refused on the channels of
 * {@code idem.pipeline.strict-channels}); a member named twice, of the wrong type, or missing
 * ({@link RequiredMembers}) is refused; the type's Jakarta constraints ({@code @NotBlank},
 * {@code @Positive}, ...) are checked when the service has a Bean Validation provider (Quarkus'
 * Hibernate Validator); then the caller's own rule. Each refusal is one sentence that names the
 * member and the rule: the record's dead-letter reason.
 */
@ApplicationScoped
class RecordReader {

    private final StrictJson json;
    private final Set<String> strictChannels;
    /** The service's Bean Validation provider, looked up once: none when it has no Hibernate Validator. */
    private final Optional<Validator> validator;

    RecordReader(StrictJson json, PipelineConfig config, Instance<Validator> validators) {
        this.json = json;
        this.strictChannels = Set.copyOf(config.strictChannels().orElse(List.of()));
        this.validator = validators.isResolvable() ? Optional.of(validators.get()) : Optional.empty();
    }

    /** {@code value}, a record of {@code channel}, read as {@code type} and held to every rule, {@code validate}'s last. */
    <T> Parsed<T> read(String channel, byte[] value, Class<T> type, Function<T, Optional<String>> validate) {
        UnknownMembers unknown = strictChannels.contains(channel) ? UnknownMembers.REFUSED : UnknownMembers.IGNORED;
        Parsed<T> parsed = json.read(value, type, unknown, read -> Optional.empty());
        if (!(parsed instanceof Parsed.Valid<T> valid)) {
            return parsed;
        }
        T read = valid.value();
        return RequiredMembers.missing(read)
                .or(() -> violation(read))
                .or(() -> validate.apply(read))
                .<Parsed<T>>map(Parsed.Invalid::new)
                .orElse(parsed);
    }

    /** The first constraint {@code value} breaks, by member, when the service validates beans at all. */
    private Optional<String> violation(Object value) {
        return validator.flatMap(present -> present.validate(value).stream()
                .min(Comparator.comparing((ConstraintViolation<Object> v) -> v.getPropertyPath().toString()))
                .map(v -> v.getPropertyPath().toString().isEmpty()
                        ? v.getMessage()
                        : "member '" + v.getPropertyPath() + "' " + v.getMessage()));
    }
}
