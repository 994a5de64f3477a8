package dev.idem.testing;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;

import io.restassured.response.Response;

/** A front end's view of one-time tokens: get one, submit an order with it. */
public final class Tokens {

    public static final String ORDER = "{\"amountCents\":1999,\"currency\":\"CNY\"}";

    private Tokens() {}

    public static String issue(String user) {
        return given().header("X-User-Id", user).post("/api/tokens").then()
                .statusCode(201)
                .body("expiresInSeconds", equalTo(1800))
                .extract().path("token");
    }

    public static Response submit(String user, String token) {
        return given().header("X-User-Id", user).header("Idempotency-Token", token)
                .contentType("application/json").body(ORDER).post("/api/orders");
    }
}
