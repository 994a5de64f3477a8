package dev.idem.extension.it;

import static dev.idem.extension.it.Http.PROBLEM;
import static dev.idem.extension.it.Http.REPLAYED;
import static dev.idem.extension.it.Http.entry;
import static dev.idem.extension.it.Http.post;
import static dev.idem.extension.it.Http.voucher;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.UUID;
import org.hamcrest.Matchers;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Idempotency-Key protocol as a client meets it on an @Idempotent endpoint. */
@QuarkusTest
class IdempotencyKeyTest {

    @Inject
    Pool pool;

    Db db;
    String caller;

    @BeforeEach
    void setUp() {
        db = new Db(pool);
        caller = "caller-" + UUID.randomUUID();
    }

    @Test
    void theSameKeyAndBodyIsReplayedAndAnotherBodyIs422() {
        String code = "protocol-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();

        Response first = post("/vouchers", caller, key, voucher(code, "holder", 25));
        first.then().statusCode(201).contentType(ContentType.JSON)
                .body("code", Matchers.equalTo(code)).body("amount", Matchers.equalTo(25));
        assertNull(first.header(REPLAYED));

        // the same content, other spacing and order of members: the same request
        Response again = post("/vouchers", caller, key,
                "{ \"amount\": 25, \"holder\": \"holder\", \"code\": \"" + code + "\" }");
        again.then().statusCode(201).header(REPLAYED, "true");
        assertArrayEquals(first.asByteArray(), again.asByteArray());
        assertEquals(first.header("Location"), again.header("Location"));

        post("/vouchers", caller, key, voucher(code, "holder", 26)).then().statusCode(422).contentType(PROBLEM)
                .body("code", Matchers.equalTo("IDEMPOTENCY_KEY_REUSED"))
                .body("title", Matchers.equalTo("Unprocessable Entity")).body("status", Matchers.equalTo(422));
        assertEquals(1, db.vouchers(code));
    }

    @Test
    void aRequestWithoutAUsableKeyOrCallerIsRefusedAndChangesNothing() {
        String account = "refused-" + UUID.randomUUID();
        given().header("X-Caller", caller).contentType(ContentType.JSON).body(entry(account, 5)).post("/ledger")
                .then().statusCode(400).contentType(PROBLEM).body("code", Matchers.equalTo("IDEMPOTENCY_KEY_MISSING"));
        post("/ledger", caller, "k".repeat(256), entry(account, 5))
                .then().statusCode(400).contentType(PROBLEM).body("code", Matchers.equalTo("IDEMPOTENCY_KEY_INVALID"));
        given().header("Idempotency-Key", "k").contentType(ContentType.JSON).body(entry(account, 5)).post("/ledger")
                .then().statusCode(401).contentType(PROBLEM).body("code", Matchers.equalTo("CALLER_MISSING"));
        assertEquals(0, db.entries(account));
    }

    @Test
    void aBodyTheBindingCannotReadIsAProblemNamingTheMemberAndKeepsTheKeyFree() {
        String key = UUID.randomUUID().toString();
        post("/vouchers", caller, key, "{\"code\":\"c\",\"holder\":\"h\",\"amount\":\"lots\"}").then()
                .statusCode(400).contentType(PROBLEM).body("code", Matchers.equalTo("BAD_REQUEST"))
                .body("detail", Matchers.equalTo("member 'amount' has the wrong type or format: a whole number is expected"));
        post("/vouchers", caller, key, "[1]").then()
                .statusCode(400).contentType(PROBLEM).body("code", Matchers.equalTo("BAD_REQUEST"))
                .body("detail", Matchers.equalTo("the body must be a JSON object"));
        post("/vouchers", caller, key, "{\"code\":").then()
                .statusCode(400).contentType(PROBLEM).body("code", Matchers.equalTo("BAD_REQUEST"))
                .body("detail", Matchers.equalTo("the body is not well-formed JSON"));

        String code = "after-unreadable-" + UUID.randomUUID();
        Response issued = post("/vouchers", caller, key, voucher(code, "holder", 1));
        issued.then().statusCode(201);
        assertNull(issued.header(REPLAYED));
    }

    @Test
    void keysArePerCaller() {
        String account = "shared-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        Response mine = post("/ledger", caller, key, entry(account, 5));
        Response theirs = post("/ledger", "other-" + caller, key, entry(account, 5));

        mine.then().statusCode(201);
        theirs.then().statusCode(201);
        assertNull(theirs.header(REPLAYED), "another caller's key is another key");
        assertNotEquals(mine.jsonPath().getLong("id"), theirs.jsonPath().getLong("id"));
        assertEquals(2, db.entries(account));
    }

    @Test
    void aRefusalOfTheMethodItselfIsNotKept() {
        String key = UUID.randomUUID().toString();
        post("/vouchers", caller, key, "{\"code\":\"x\"}").then().statusCode(400).contentType(PROBLEM)
                .body("code", Matchers.equalTo("BAD_REQUEST"));
        String code = "after-refusal-" + UUID.randomUUID();
        Response issued = post("/vouchers", caller, key, voucher(code, "holder", 1));
        issued.then().statusCode(201);
        assertNull(issued.header(REPLAYED));
        assertEquals(1, db.vouchers(code));
    }
}
