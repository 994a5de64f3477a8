package dev.idem.orders;

import static dev.idem.testing.Problems.problem;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.Db;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The gateway an order names when it is made: stored, shown, and nothing else accepted. */
@QuarkusTest
class OrderGatewayTest {

    @Inject
    Pool pool;

    static Response submit(String user, String body) {
        return given().header("X-User-Id", user).header("Idempotency-Key", UUID.randomUUID().toString())
                .contentType("application/json").body(body).post("/api/orders");
    }

    @Test
    void anOrderNamesWechatPayOrAlipayOrNone() {
        Db db = new Db(pool);
        String user = "gateway-" + UUID.randomUUID();
        String alipay = submit(user, "{\"amountCents\":1999,\"currency\":\"CNY\",\"gateway\":\"alipay\"}")
                .then().statusCode(201).body("gateway", equalTo("alipay")).extract().path("orderId");
        given().header("X-User-Id", user).get("/api/orders/" + alipay).then().statusCode(200)
                .body("gateway", equalTo("alipay"));
        String wechatpay = submit(user, "{\"gateway\":\"wechatpay\",\"amountCents\":1999,\"currency\":\"CNY\"}")
                .then().statusCode(201).body("gateway", equalTo("wechatpay")).extract().path("orderId");
        String none = submit(user, "{\"amountCents\":1999,\"currency\":\"CNY\"}")
                .then().statusCode(201).body("gateway", nullValue()).extract().path("orderId");

        assertEquals("alipay", db.string("SELECT gateway FROM orders WHERE id = $1", alipay));
        assertEquals("wechatpay", db.string("SELECT gateway FROM orders WHERE id = $1", wechatpay));
        assertEquals(null, db.string("SELECT gateway FROM orders WHERE id = $1", none));
        // no gateway is queried in this profile: no order is put on the query's schedule
        assertEquals(0, db.count("SELECT count(*) FROM orders WHERE user_id = $1 AND query_at IS NOT NULL", user));
    }

    @Test
    void anyOtherGatewayIsABadRequestAndStoresNothing() {
        Db db = new Db(pool);
        String user = "gateway-" + UUID.randomUUID();
        problem(submit(user, "{\"amountCents\":1999,\"currency\":\"CNY\",\"gateway\":\"paypal\"}"), 400, "BAD_REQUEST")
                .body("detail", containsString("gateway must be wechatpay or alipay"));
        problem(submit(user, "{\"amountCents\":1999,\"currency\":\"CNY\",\"gateway\":\"WECHATPAY\"}"), 400, "BAD_REQUEST");
        problem(submit(user, "{\"amountCents\":1999,\"currency\":\"CNY\",\"gateway\":1}"), 400, "BAD_REQUEST");
        problem(submit(user, "{\"amountCents\":1999,\"currency\":\"CNY\",\"gateway\":\"alipay\",\"gateway\":\"alipay\"}"),
                400, "BAD_REQUEST");
        assertEquals(0, db.count("SELECT count(*) FROM orders WHERE user_id = $1", user));
    }
}
