package dev.idem.outbox;

import io.quarkus.logging.Log;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import io.smallrye.mutiny.Uni;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.smallrye.reactive.messaging.MutinyEmitter;
import io.smallrye.reactive.messaging.TracingMetadata;
import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

/**
 * Publishes outbox events to Kafka and marks them published only after the broker acknowledged.
 * Woken in-process when this instance commits events ({@link OutboxSignal}), with a slow poll as
 * the safety net that also picks up what other instances wrote. Batches are
 * claimed with SKIP LOCKED, so several instances share the outbox without publishing a row twice
 * at once; a crash between send and mark publishes again, which the consumers absorb.
 */
@ApplicationScoped
public class OutboxRelay {

    private final Pool pool;
    private final OutboxRepository outbox;
    private final MutinyEmitter<String> kafka;
    private final OutboxConfig config;
    private final OutboxSignal signal;
    private final AtomicBoolean draining = new AtomicBoolean();
    private final AtomicBoolean again = new AtomicBoolean();
    /** Set once messaging is wired (start-up) and cleared at shutdown; read by the poll's skip predicate. */
    private static volatile boolean running;

    OutboxRelay(Pool pool, OutboxRepository outbox, OutboxConfig config, OutboxSignal signal,
                @Channel("outbox") @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 4096)
                MutinyEmitter<String> kafka) {
        this.pool = pool;
        this.outbox = outbox;
        this.config = config;
        this.signal = signal;
        this.kafka = kafka;
    }

    void start(@Observes StartupEvent start) {
        if (!config.relayEnabled()) {
            return;
        }
        running = true;
        signal.listen(this::wake);
        wake();
    }

    void stop(@Observes ShutdownEvent stop) {
        running = false;
    }

    /** The safety net, skipped until start-up has wired messaging (and after shutdown began). */
    @Scheduled(every = "${idem.outbox.poll-interval}", skipExecutionIf = NotRunning.class,
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void poll() {
        wake();
    }

    /**
     * Asked before each poll without creating the relay, whose emitter cannot be injected before
     * messaging is wired at start-up.
     */
    @Singleton
    static class NotRunning implements Scheduled.SkipPredicate {
        @Override
        public boolean test(ScheduledExecution execution) {
            return !running;
        }
    }

    /** Drains until the outbox is empty; a wake-up during a drain makes it go round once more. */
    void wake() {
        if (!running) {
            return;
        }
        if (!draining.compareAndSet(false, true)) {
            again.set(true);
            return;
        }
        again.set(false);
        publishBatch().subscribe().with(
                published -> {
                    draining.set(false);
                    if (published == config.batchSize() || again.getAndSet(false)) {
                        wake();
                    }
                },
                failure -> {
                    draining.set(false);
                    Log.warnf("Outbox relay failed, the next wake-up retries: %s", failure.toString());
                });
    }

    /** One transaction: claim a batch, send it, wait for every ack, mark it published. */
    Uni<Integer> publishBatch() {
        return pool.withTransaction(tx -> outbox.claim(tx, config.batchSize()).chain(events -> events.isEmpty()
                ? Uni.createFrom().item(0)
                : send(events).chain(() -> outbox.markPublished(tx, events)).replaceWith(events.size())));
    }

    private Uni<Void> send(List<OutboxEvent> events) {
        List<Uni<Void>> acks = events.stream()
                .map(event -> kafka.sendMessage(inTrace(event, Message.of(event.payload()).addMetadata(
                        OutgoingKafkaRecordMetadata.<String>builder()
                                .withTopic(event.topic())
                                .withKey(event.key())
                                .build()))))
                .toList();
        return Uni.join().all(acks).andFailFast().replaceWithVoid();
    }

    /**
     * The event sent in the trace of the delivery that wrote it: the connector's tracing makes its
     * send span a child of that delivery and puts the send's traceparent in the record's headers.
     */
    private static Message<String> inTrace(OutboxEvent event, Message<String> message) {
        if (event.traceparent() == null) {
            return message;
        }
        Context written = W3CTraceContextPropagator.getInstance().extract(Context.root(), event.traceparent(), TRACEPARENT);
        return message.addMetadata(TracingMetadata.withCurrent(written));
    }

    /** A stored traceparent read as the one header a W3C carrier needs. */
    private static final TextMapGetter<String> TRACEPARENT = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(String traceparent) {
            return List.of("traceparent");
        }

        @Override
        public String get(String traceparent, String name) {
            return "traceparent".equals(name) ? traceparent : null;
        }
    };
}
