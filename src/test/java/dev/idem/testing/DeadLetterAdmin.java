package dev.idem.testing;

import static io.restassured.RestAssured.given;

import io.restassured.path.json.JsonPath;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;

/** The dead-letter admin endpoints, called as an operator would. */
public final class DeadLetterAdmin {

    public static final String TOKEN = "test-admin-token";

    private DeadLetterAdmin() {}

    /** The newest {@code limit} dead letters of the channel, newest first. */
    public static List<Map<String, Object>> list(String channel, int limit) {
        return given().header("X-Admin-Token", TOKEN).get("/admin/dead-letters/" + channel + "?limit=" + limit)
                .then().statusCode(200).extract().jsonPath().getList("records");
    }

    /** Those of the newest 1,000 with this key, newest first: a test's own, whatever others left. */
    public static List<Map<String, Object>> withKey(String channel, String key) {
        return list(channel, 1000).stream().filter(record -> key.equals(record.get("key"))).toList();
    }

    /** Waits until exactly {@code count} dead letters carry this key, and answers them, newest first. */
    public static List<Map<String, Object>> await(String channel, String key, int count) {
        return Awaitility.await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
                .until(() -> withKey(channel, key), records -> records.size() == count);
    }

    /** {@code query} empty for all, or naming one dead letter. */
    public static JsonPath redrive(String channel, String query) {
        return given().header("X-Admin-Token", TOKEN).post("/admin/dead-letters/" + channel + "/redrive" + query)
                .then().statusCode(200).extract().jsonPath();
    }

    /** The dead letter's position as the re-drive names it: {@code <partition>:<offset>}. */
    public static String at(Map<String, Object> record) {
        return record.get("partition") + ":" + record.get("offset");
    }
}
