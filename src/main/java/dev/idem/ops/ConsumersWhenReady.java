package dev.idem.ops;

import io.quarkus.logging.Log;
import io.quarkus.vertx.http.HttpServerStart;
import io.smallrye.health.SmallRyeHealthReporter;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.reactive.messaging.ChannelRegistry;
import io.smallrye.reactive.messaging.PausableChannel;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.ObservesAsync;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Starts the Kafka consumers once the instance is ready. Every incoming channel that starts paused
 * ({@code pausable.initially-paused=true}, here with {@code pausable.late-subscription=true}) is left
 * unsubscribed by start-up; once the HTTP server listens the readiness checks run, and when they
 * are UP the channels subscribe and their consumers are made. Making consumers takes the cores
 * from the rest of the start, so they are made after it, out of the way of the first answer. And an
 * instance that is not ready takes no partitions from those that are: while readiness is DOWN the
 * checks run again every second, the records waiting in Kafka meanwhile, nothing skipped. Quarkus
 * fires the event asynchronously, on a worker thread.
 */
@ApplicationScoped
class ConsumersWhenReady {

    static final Duration RETRY = Duration.ofSeconds(1);

    private final SmallRyeHealthReporter health;
    private final ChannelRegistry channels;
    private final AtomicBoolean waitingLogged = new AtomicBoolean();

    ConsumersWhenReady(SmallRyeHealthReporter health, ChannelRegistry channels) {
        this.health = health;
        this.channels = channels;
    }

    void start(@ObservesAsync HttpServerStart started) {
        startWhenReady();
    }

    private void startWhenReady() {
        health.getReadinessAsync()
                .map(report -> !report.isDown())
                .onFailure().recoverWithItem(false)
                // Resuming wires the channels' subscribers: not on the event loop that answered the checks.
                .emitOn(Infrastructure.getDefaultWorkerPool())
                .subscribe().with(ready -> {
                    if (ready) {
                        resumePausedChannels();
                    } else {
                        if (waitingLogged.compareAndSet(false, true)) {
                            Log.infof("Kafka consumers wait for readiness (checked every %d s)", RETRY.toSeconds());
                        }
                        Uni.createFrom().voidItem().onItem().delayIt().by(RETRY).subscribe().with(nothing -> startWhenReady());
                    }
                });
    }

    private void resumePausedChannels() {
        for (String channel : channels.getIncomingNames()) {
            resume(channel);
        }
    }

    /** With {@code concurrency} above 1 the connector makes one channel per consumer, {@code name$1}, {@code name$2}… */
    private void resume(String channel) {
        resume(channel, channels.getPausable(channel));
        PausableChannel copy;
        for (int n = 1; (copy = channels.getPausable(channel + "$" + n)) != null; n++) {
            resume(channel + "$" + n, copy);
        }
    }

    private static void resume(String name, PausableChannel pausable) {
        if (pausable != null && pausable.isPaused()) {
            Log.debugf("Kafka channel %s starts now that the instance is ready", name);
            pausable.resume();
        }
    }
}
