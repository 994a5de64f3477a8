package dev.idem.ops;

import io.quarkus.logging.Log;
import io.quarkus.vertx.http.HttpServerStart;
import io.smallrye.reactive.messaging.ChannelRegistry;
import io.smallrye.reactive.messaging.PausableChannel;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.ObservesAsync;
import org.eclipse.microprofile.config.Config;

/**
 * Starts the Kafka consumers once the HTTP server listens. Every incoming channel configured
 * {@code pausable.late-subscription=true} (with {@code pausable.initially-paused=true}) is left
 * unsubscribed by start-up, so no consumer is made before the server answers: eight consumers made
 * at once took the two cores from the rest of the start, and the first answer came some 100 ms
 * later. Their records wait in Kafka meanwhile; nothing is skipped. Quarkus fires the event
 * asynchronously, on a worker thread.
 */
@ApplicationScoped
class ConsumersAfterHttp {

    void start(@ObservesAsync HttpServerStart started, ChannelRegistry channels, Config config) {
        for (String channel : channels.getIncomingNames()) {
            if (config.getOptionalValue("mp.messaging.incoming." + channel + ".pausable.late-subscription", Boolean.class)
                    .orElse(false)) {
                resume(channels, channel);
            }
        }
    }

    /** With {@code concurrency} above 1 the connector makes one channel per consumer, {@code name$1}, {@code name$2}… */
    private static void resume(ChannelRegistry channels, String channel) {
        resume(channel, channels.getPausable(channel));
        PausableChannel copy;
        for (int n = 1; (copy = channels.getPausable(channel + "$" + n)) != null; n++) {
            resume(channel + "$" + n, copy);
        }
    }

    private static void resume(String name, PausableChannel pausable) {
        if (pausable != null && pausable.isPaused()) {
            Log.debugf("Kafka channel %s starts now that HTTP listens", name);
            pausable.resume();
        }
    }
}
