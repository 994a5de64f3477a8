package dev.idem.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Each event loop gets a Redis client of its own, made from Quarkus's options (here the test
 * database), and work off the loops keeps the shared one. Should Quarkus stop handing its options
 * to the customizer, every command would quietly go back to the shared client: this fails first.
 */
@QuarkusTest
class LoopRedisTest {

    @Inject
    LoopRedis loops;

    @Inject
    ReactiveRedisDataSource shared;

    @Inject
    Vertx vertx;

    @Test
    void anEventLoopGetsAClientOfItsOwnThatReachesTheConfiguredRedis() throws Exception {
        Context loop = vertx.getOrCreateContext();
        onLoop(loop, loops::current); // the first call asks for the loop's client
        Redis own = onLoop(loop, loops::current);
        assertNotSame(shared.getRedis(), own, "the loop kept the shared client");
        assertSame(own, onLoop(loop, loops::current), "one client per loop, made once");

        String key = "loop-redis-test";
        shared.value(String.class).set(key, "written through the shared client").await().atMost(Duration.ofSeconds(5));
        String read = own.send(Request.cmd(Command.GET).arg(key)).await().atMost(Duration.ofSeconds(5)).toString();
        assertEquals("written through the shared client", read, "the loop's client uses another database");
    }

    @Test
    void workOffTheEventLoopsUsesTheSharedClient() {
        assertSame(shared.getRedis(), loops.current());
    }

    /** {@code call}'s answer, called on {@code context}'s event loop. */
    private static <T> T onLoop(Context context, Supplier<T> call) throws Exception {
        CompletableFuture<T> answer = new CompletableFuture<>();
        context.runOnContext(ignored -> answer.complete(call.get()));
        return answer.get(5, TimeUnit.SECONDS);
    }
}
