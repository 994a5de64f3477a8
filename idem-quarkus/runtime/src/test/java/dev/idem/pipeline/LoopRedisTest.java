package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.quarkus.redis.runtime.datasource.ReactiveRedisDataSourceImpl;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.RedisAPI;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import io.vertx.redis.client.RedisOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The commands a loop sends in one turn, sent together to the Redis on 127.0.0.1:6379, each answered with its own reply. */
class LoopRedisTest {

    private static final String URL = "redis://127.0.0.1:6379/5";
    private static final int COMMANDS = 50;

    private final Vertx vertx = Vertx.vertx();
    private final Redis shared = Redis.createClient(io.vertx.mutiny.core.Vertx.newInstance(vertx), URL);
    private final LoopRedis loops = loops();
    private final Context loop = vertx.getOrCreateContext();

    @AfterEach
    void close() throws Exception {
        loops.close();
        shared.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void eachCommandOfATurnGetsItsOwnReply() throws Exception {
        awaitOwnClient();
        String run = "loop-redis-" + System.nanoTime();
        // all sent in one turn of the loop: SET k_i i, then GET k_i read back in another turn
        List<Response> set = onLoop(() -> all(IntStream.range(0, COMMANDS).mapToObj(i ->
                loops.send(Request.cmd(Command.SET).arg(run + ":" + i).arg(i).arg("PX").arg(60_000))).toList()));
        assertEquals(COMMANDS, set.stream().filter(reply -> "OK".equals(reply.toString())).count());
        List<Response> got = onLoop(() -> all(IntStream.range(0, COMMANDS).mapToObj(i ->
                loops.send(Request.cmd(Command.GET).arg(run + ":" + i))).toList()));
        assertEquals(IntStream.range(0, COMMANDS).mapToObj(String::valueOf).toList(),
                got.stream().map(Response::toString).toList());
    }

    @Test
    void aCommandThatFailsFailsItsTurnWhichEachCallerSees() throws Exception {
        awaitOwnClient();
        List<String> seen = onLoop(() -> all(List.of(
                loops.send(Request.cmd(Command.PING)).map(Response::toString).onFailure().recoverWithItem("failed"),
                loops.send(Request.cmd(Command.INCR).arg("loop-redis-not-a-number-" + System.nanoTime()).arg("extra"))
                        .map(Response::toString).onFailure().recoverWithItem("failed"))));
        // Redis answers each; the client fails the batch whose replies hold an error, so each caller degrades
        assertEquals(List.of("failed", "failed"), seen);
    }

    @Test
    void aReplyGoesOnInItsCallersOwnContext() throws Exception {
        awaitOwnClient();
        // a request runs on a duplicate of the loop's context, which carries its trace and log fields
        Context request = VertxContext.createNewDuplicatedContext(loop);
        CompletableFuture<Boolean> sameContext = new CompletableFuture<>();
        request.runOnContext(ignored -> loops.send(Request.cmd(Command.PING))
                .subscribe().with(reply -> sameContext.complete(Vertx.currentContext() == request), sameContext::completeExceptionally));
        assertEquals(true, sameContext.get(10, TimeUnit.SECONDS));
    }

    /** The loop's own client is made on the loop, a turn after it was first asked for. */
    private void awaitOwnClient() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (onLoop(() -> Uni.createFrom().item(loops.current() != shared)) != Boolean.TRUE) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the loop's client was never made");
            }
        }
    }

    private <T> T onLoop(Supplier<Uni<T>> sent) throws Exception {
        CompletableFuture<T> result = new CompletableFuture<>();
        loop.runOnContext(ignored -> sent.get().subscribe().with(result::complete, result::completeExceptionally));
        return result.get(10, TimeUnit.SECONDS);
    }

    private static <T> Uni<List<T>> all(List<Uni<T>> unis) {
        return Uni.join().all(unis).andCollectFailures().map(ArrayList::new);
    }

    private LoopRedis loops() {
        LoopRedis.DefaultOptions options = new LoopRedis.DefaultOptions();
        options.customize("<default>", new RedisOptions().setConnectionString(URL));
        return new LoopRedis(vertx, options, new ReactiveRedisDataSourceImpl(io.vertx.mutiny.core.Vertx.newInstance(vertx),
                shared, RedisAPI.api(shared)));
    }
}
