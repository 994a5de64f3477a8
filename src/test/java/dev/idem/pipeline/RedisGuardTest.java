package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class RedisGuardTest {

    @Test
    void absentValueMeansThisDeliveryClaimedTheKey() {
        assertInstanceOf(RedisGuard.PreCheck.Claimed.class, RedisGuard.parse(null));
    }

    @Test
    void doneCarriesFingerprintAndResult() {
        RedisGuard.PreCheck pre = RedisGuard.parse("DONE abc123 {\"code\":\"SUCCESS\",\"note\":\"a b\"}");
        RedisGuard.PreCheck.Done done = assertInstanceOf(RedisGuard.PreCheck.Done.class, pre);
        assertEquals("abc123", done.fingerprint());
        assertEquals(new JsonObject().put("code", "SUCCESS").put("note", "a b"), done.result());
    }

    @Test
    void anythingElseIsLeftToTheDatabase() {
        assertInstanceOf(RedisGuard.PreCheck.Processing.class, RedisGuard.parse("PROCESSING"));
        assertInstanceOf(RedisGuard.PreCheck.Processing.class, RedisGuard.parse("DONE abc {not json"));
        assertInstanceOf(RedisGuard.PreCheck.Processing.class, RedisGuard.parse("DONE "));
    }
}
