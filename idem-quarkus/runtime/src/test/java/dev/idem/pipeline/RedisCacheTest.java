package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class RedisCacheTest {

    @Test
    void absentValueMeansThisDeliveryClaimedTheKey() {
        assertInstanceOf(DedupCache.PreCheck.Claimed.class, RedisCache.parse(null));
    }

    @Test
    void doneCarriesFingerprintAndResult() {
        DedupCache.PreCheck pre = RedisCache.parse("DONE abc123 {\"code\":\"SUCCESS\",\"note\":\"a b\"}");
        DedupCache.PreCheck.Done done = assertInstanceOf(DedupCache.PreCheck.Done.class, pre);
        assertEquals("abc123", done.fingerprint());
        assertEquals(new JsonObject().put("code", "SUCCESS").put("note", "a b"), done.result());
    }

    @Test
    void anythingElseIsLeftToTheDatabase() {
        assertInstanceOf(DedupCache.PreCheck.Processing.class, RedisCache.parse("PROCESSING"));
        assertInstanceOf(DedupCache.PreCheck.Processing.class, RedisCache.parse("DONE abc {not json"));
        assertInstanceOf(DedupCache.PreCheck.Processing.class, RedisCache.parse("DONE "));
    }
}
