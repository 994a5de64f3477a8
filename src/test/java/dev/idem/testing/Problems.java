package dev.idem.testing;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.restassured.response.Response;
import io.restassured.response.ValidatableResponse;
import io.vertx.core.json.JsonObject;

/** The API's one error shape: RFC 9457 problem+json with a {@code code}, and no stack trace. */
public final class Problems {

    private Problems() {}

    public static ValidatableResponse problem(Response response, int status, String code) {
        return response.then()
                .statusCode(status)
                .contentType("application/problem+json")
                .body("status", equalTo(status))
                .body("code", equalTo(code))
                .body("title", not(equalTo("")))
                .body(not(containsString("Exception")))
                .body(not(containsString("\tat ")));
    }

    public static void problem(RawHttp.Answer answer, int status, String code) {
        assertEquals(status, answer.status(), answer.body());
        assertEquals("application/problem+json", answer.contentType(), answer.body());
        JsonObject body = new JsonObject(answer.body());
        assertEquals(status, body.getInteger("status"));
        assertEquals(code, body.getString("code"));
    }
}
