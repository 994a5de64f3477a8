package dev.idem.pipeline;

/** One delivery of a batch ({@link IdempotencyPipeline#executeAll}): its key, and the work the key guards. */
public record Item(IdemRequest request, Work work) {}
