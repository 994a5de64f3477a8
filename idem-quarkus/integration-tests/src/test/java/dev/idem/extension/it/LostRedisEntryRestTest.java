package dev.idem.extension.it;

import static dev.idem.extension.it.Http.PROBLEM;
import static dev.idem.extension.it.Http.REPLAYED;
import static dev.idem.extension.it.Http.entry;
import static dev.idem.extension.it.Http.post;
import static dev.idem.extension.it.Http.voucher;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.extension.it.Cache.Loss;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.net.URI;
import java.util.UUID;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Redis is a cache: a repeated request whose key Redis lost (deleted, expired, flushed) is still
 * answered with the first answer, from the key's record in Postgres, whether or not the work's
 * own tables would have refused it.
 */
@QuarkusTest
class LostRedisEntryRestTest {

    @Inject
    Db db;

    @Inject
    Cache cache;

    @Inject
    Counters counters;

    final String caller = "caller-" + UUID.randomUUID();

    /** vouchers: a second issue of the code would break the table's own unique constraint. */
    @ParameterizedTest
    @EnumSource(Loss.class)
    void aVoucherRequestWhoseRedisEntryIsLostIsReplayed(Loss loss) {
        String code = "rest-" + loss + "-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        String body = voucher(code, "holder", 25);

        Response first = post("/vouchers", caller, key, body);
        first.then().statusCode(201);
        replayedAfterLoss(loss, "voucher-issue", key, first, () -> post("/vouchers", caller, key, body));
        assertEquals("/vouchers/" + code, URI.create(first.header("Location")).getPath());
        assertEquals(1, db.vouchers(code));
    }

    /** ledger: nothing in the table refuses a second entry; only the key's record does. */
    @ParameterizedTest
    @EnumSource(Loss.class)
    void aLedgerRequestWhoseRedisEntryIsLostIsReplayed(Loss loss) {
        String account = "rest-" + loss + "-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        String body = entry(account, 40);

        Response first = post("/ledger", caller, key, body);
        first.then().statusCode(201);
        replayedAfterLoss(loss, "ledger-entry", key, first, () -> post("/ledger", caller, key, body));
        assertEquals(1, db.entries(account));
    }

    /**
     * The key's record gone too (archived) and Redis without it: the work runs, breaks the
     * vouchers' unique constraint, and nothing says it was this key's: 409 UNIQUE_VIOLATION.
     */
    @Test
    void aVoucherIssuedBeforeWhoseKeyHasNoRecordLeftIs409UniqueViolation() {
        String code = "rest-archived-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        String body = voucher(code, "holder", 25);
        post("/vouchers", caller, key, body).then().statusCode(201);
        String redisKey = cache.key("voucher-issue", caller, key);
        cache.awaitDone(redisKey);

        db.forgetRecord("voucher-issue", caller + ":" + key);
        Loss.DELETED.lose(cache, redisKey);

        for (int i = 0; i < 2; i++) {
            Response again = post("/vouchers", caller, key, body);
            again.then().statusCode(409).contentType(PROBLEM);
            assertEquals("UNIQUE_VIOLATION", again.jsonPath().getString("code"));
            assertNull(again.header(REPLAYED));
        }
        assertEquals(1, db.vouchers(code));
        assertEquals(0, db.records("voucher-issue", caller + ":" + key), "a refusal keeps no record");
    }

    private void replayedAfterLoss(Loss loss, String scope, String key, Response first,
                                   Supplier<Response> again) {
        assertNull(first.header(REPLAYED));
        String redisKey = cache.key(scope, caller, key);
        cache.awaitDone(redisKey);
        loss.lose(cache, redisKey);
        assertFalse(cache.exists(redisKey), "Redis lost the key");
        double fromDb = counters.duplicatesFromDb(scope);

        Response replay = again.get();

        assertEquals(first.statusCode(), replay.statusCode(), replay.asString());
        assertEquals("true", replay.header(REPLAYED));
        assertEquals(first.contentType(), replay.contentType());
        assertEquals(first.header("Location"), replay.header("Location"));
        assertArrayEquals(first.asByteArray(), replay.asByteArray(), "the first answer, byte for byte");
        assertEquals(1, counters.duplicatesFromDb(scope) - fromDb, "Postgres answered the duplicate");
        assertEquals(1, db.records(scope, caller + ":" + key));
        // the record's answer is given back to Redis, which answers the next copy
        cache.awaitDone(redisKey);
    }
}
