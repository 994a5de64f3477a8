package dev.idem.outbox;

/**
 * An event waiting in the outbox; the payload is kept as the JSON text it will be sent as, with the
 * W3C traceparent of the delivery that wrote it (null: not traced).
 */
record OutboxEvent(long id, String topic, String key, String payload, String traceparent) {}
