package dev.idem.outbox;

/** An event waiting in the outbox; the payload is kept as the JSON text it will be sent as. */
record OutboxEvent(long id, String topic, String key, String payload) {}
