package dev.idem.extension.it;

import static io.restassured.RestAssured.given;

import io.restassured.http.ContentType;
import io.restassured.response.Response;

/** Requests as a client sends them: a caller (the X-Caller header a gateway sets), a key, a JSON body. */
final class Http {

    static final String PROBLEM = "application/problem+json";
    static final String REPLAYED = "Idempotent-Replayed";

    private Http() {}

    static Response post(String path, String caller, String key, String body) {
        return given().header("X-Caller", caller).header("Idempotency-Key", key)
                .contentType(ContentType.JSON).body(body)
                .post(path);
    }

    static String voucher(String code, String holder, int amount) {
        return "{\"code\":\"" + code + "\",\"holder\":\"" + holder + "\",\"amount\":" + amount + "}";
    }

    static String entry(String account, long amount) {
        return "{\"account\":\"" + account + "\",\"amount\":" + amount + "}";
    }

    static String posting(String ref, String account, long amount) {
        return "{\"ref\":\"" + ref + "\",\"account\":\"" + account + "\",\"amount\":" + amount + "}";
    }
}
