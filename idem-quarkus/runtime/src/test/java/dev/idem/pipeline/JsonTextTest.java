package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class JsonTextTest {

    @Test
    void storedResultsComeBackAsTheyWereWritten() {
        JsonObject result = new JsonObject().put("code", "SUCCESS").put("amountCents", 1999L)
                .put("nested", new JsonObject().put("flag", true).putNull("none"))
                .put("list", new JsonArray().add("a").add(2));
        String text = JsonText.encode(result);
        assertEquals(result.encode(), text);
        assertEquals(result, JsonText.decode(text));
        assertEquals("SUCCESS", JsonText.decode(text).getString("code"));
        assertEquals(true, JsonText.decode(text).getJsonObject("nested").getBoolean("flag"));
    }

    @Test
    void textThatIsNoObjectIsRefused() {
        assertThrows(DecodeException.class, () -> JsonText.decode("[1,2]"));
        assertThrows(DecodeException.class, () -> JsonText.decode("null"));
        assertThrows(DecodeException.class, () -> JsonText.decode("{\"code\":"));
        assertThrows(DecodeException.class, () -> JsonText.decode("{} trailing"));
    }
}
