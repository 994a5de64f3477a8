package dev.idem.pipeline.kafka;

import dev.idem.pipeline.Effect;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * The business change a Kafka record asks for, given to
 * {@link IdempotentConsumer#consume(org.eclipse.microprofile.reactive.messaging.Message, String, Class, java.util.function.Function, RecordWork)}.
 */
@FunctionalInterface
public interface RecordWork<T> {

    /**
     * Applies {@code record} through {@code tx}, the pipeline's connection, inside the transaction
     * that records its key; every statement goes through it. Answers what happened, usually
     * {@link Effect#processed()}. A failure rolls back and the record is tried again.
     */
    Uni<Effect> run(T record, SqlConnection tx);
}
