package dev.idem.extension.it;

import static dev.idem.extension.it.Http.REPLAYED;
import static dev.idem.extension.it.Http.entry;
import static dev.idem.extension.it.Http.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Redis stops while requests keep coming: they are served from the database, and the log says
 * once that Redis is failing (not once per request), then that it is back once it is.
 */
@QuarkusTest
@QuarkusTestResource(value = OwnRedis.class, restrictToAnnotatedClass = true)
class RedisOutageTest {

    @Inject
    Pool pool;

    /** What the pipeline's Redis layer logged. */
    private LogLines said;

    @BeforeEach
    void listen() {
        said = LogLines.of("dev.idem.pipeline.RedisCache");
    }

    @AfterEach
    void stopListening() {
        said.close();
        OwnRedis.down();
        OwnRedis.up();
    }

    @Test
    void aRedisStopIsSaidOnceAndItsReturnOnce() {
        String caller = "outage-" + UUID.randomUUID();
        String account = "account-" + caller;
        post("/ledger", caller, UUID.randomUUID().toString(), entry(account, 5)).then().statusCode(201);
        assertEquals(List.of(), said.lines());

        OwnRedis.down();
        String key = UUID.randomUUID().toString();
        post("/ledger", caller, key, entry(account, 5)).then().statusCode(201);
        // requests keep coming; once Redis has failed for a second, the log says so
        AtomicInteger served = new AtomicInteger(2);
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
            post("/ledger", caller, UUID.randomUUID().toString(), entry(account, 5)).then().statusCode(201);
            served.incrementAndGet();
            return !said.startingWith("WARN").isEmpty();
        });
        post("/ledger", caller, key, entry(account, 5)).then().statusCode(201).header(REPLAYED, "true");
        assertEquals(served.get(), new Db(pool).entries(account), "served from the database, each entry once");
        List<String> warnings = said.startingWith("WARN");
        assertEquals(1, warnings.size(), said.lines().toString());
        assertTrue(warnings.get(0).startsWith("WARN Redis is failing: "), warnings.get(0));

        OwnRedis.up();
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            post("/ledger", caller, UUID.randomUUID().toString(), entry(account, 1)).then().statusCode(201);
            return !said.startingWith("INFO Redis is back after ").isEmpty();
        });
        String back = said.startingWith("INFO").get(0);
        assertTrue(back.matches("INFO Redis is back after \\d+\\.\\d s: \\d+ calls skipped meanwhile"), back);
        assertEquals(1, said.startingWith("WARN").size(), said.lines().toString());
    }
}
