package dev.idem.pipeline.kafka;

/** How a consumed record ends once the pipeline gave its outcome. */
public sealed interface Disposition {

    /** Done with: acked, so its offset may be committed. */
    record Ack() implements Disposition {}

    /** Sent to the channel's dead-letter topic with {@code reason}, then acked. */
    record DeadLetter(String reason) implements Disposition {}

    /** Applied again after a backoff (the key is in flight elsewhere); never acked meanwhile. */
    record RetryLater() implements Disposition {}
}
