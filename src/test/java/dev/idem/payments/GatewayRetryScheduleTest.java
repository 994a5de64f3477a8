package dev.idem.payments;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.orders.Order;
import dev.idem.orders.OrderRepository;
import dev.idem.orders.OrderStatus;
import dev.idem.testing.AlipaySimulator;
import dev.idem.testing.Db;
import dev.idem.testing.GatewaysOn;
import dev.idem.testing.RetrySchedule;
import dev.idem.testing.Topics;
import dev.idem.testing.WeChatPaySimulator;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Each gateway retries a notification on its own schedule until it reads the answer it expects.
 * The schedules are compressed (a day of retries in about a second); the order that the first
 * deliveries do not find is stored between two of them, as it would be by a slow checkout.
 */
@QuarkusTest
@TestProfile(GatewaysOn.class)
class GatewayRetryScheduleTest {

    static final long AMOUNT = 1999;
    /** A day of a gateway's retries in under a second. */
    static final long COMPRESSION = 100_000;

    @Inject
    Pool pool;

    @Inject
    OrderRepository orders;

    @Inject
    Db db;

    final String user = "schedule-" + UUID.randomUUID();

    /** An order stored under an id chosen in advance, so that a notification can name it before it exists. */
    void storeOrder(String orderId) {
        orders.insert(pool, new Order(orderId, user, AMOUNT, "CNY", OrderStatus.WAIT_PAY, null,
                Instant.now().truncatedTo(ChronoUnit.MICROS), null, null), null).await().atMost(Duration.ofSeconds(30));
    }

    static List<Integer> statuses(List<RetrySchedule.Attempt> attempts) {
        return attempts.stream().map(RetrySchedule.Attempt::status).collect(Collectors.toList());
    }

    static List<Duration> delays(List<RetrySchedule.Attempt> attempts) {
        return attempts.stream().map(RetrySchedule.Attempt::after).collect(Collectors.toList());
    }

    @Test
    void weChatPayStopsAtTheFirstRecordedAnswer() {
        String order = "schedule-" + UUID.randomUUID();
        WeChatPaySimulator wechat = WeChatPaySimulator.configured();
        String body = wechat.notification(order, "4200" + order, "SUCCESS", AMOUNT);

        List<RetrySchedule.Attempt> attempts = wechat.deliverOnSchedule(body, COMPRESSION, attempt -> {
            if (attempt.number() == 3) {
                storeOrder(order);
            }
        });

        assertEquals(List.of(404, 404, 404, 200), statuses(attempts));
        assertEquals(List.of(Duration.ZERO, Duration.ofSeconds(15), Duration.ofSeconds(15), Duration.ofSeconds(30)),
                delays(attempts));
        assertEquals("", attempts.get(3).body());
        assertEquals("PAID", db.string("SELECT status FROM orders WHERE id = $1", order));
        Topics.awaitCoupon(db, "paid:" + order);
    }

    @Test
    void weChatPayRetriesItsWholeScheduleWhileTheOrderIsUnknown() {
        String order = "schedule-never-" + UUID.randomUUID();
        WeChatPaySimulator wechat = WeChatPaySimulator.configured();

        List<RetrySchedule.Attempt> attempts = wechat.deliverOnSchedule(
                wechat.notification(order, "4200" + order, "SUCCESS", AMOUNT), COMPRESSION, attempt -> { });

        assertEquals(WeChatPaySimulator.SCHEDULE.delays().size() + 1, attempts.size());
        attempts.forEach(attempt -> assertEquals(404, attempt.status(), attempt.body()));
        assertEquals(WeChatPaySimulator.SCHEDULE.delays(), delays(attempts).subList(1, attempts.size()));
    }

    @Test
    void alipayStopsAtTheFirstSuccess() {
        String order = "schedule-" + UUID.randomUUID();
        AlipaySimulator alipay = AlipaySimulator.configured();

        List<RetrySchedule.Attempt> attempts = alipay.deliverOnSchedule(
                alipay.notification(order, "2026" + order, "TRADE_SUCCESS", AMOUNT), COMPRESSION, attempt -> {
                    if (attempt.number() == 2) {
                        storeOrder(order);
                    }
                });

        assertEquals(List.of(404, 404, 200), statuses(attempts));
        assertEquals(List.of(Duration.ZERO, Duration.ofMinutes(4), Duration.ofMinutes(10)), delays(attempts));
        assertEquals(List.of("failure", "failure", "success"),
                attempts.stream().map(RetrySchedule.Attempt::body).collect(Collectors.toList()));
        assertEquals("PAID", db.string("SELECT status FROM orders WHERE id = $1", order));
    }

    @Test
    void aFirstDeliveryThatIsRecordedIsTheOnlyOne() {
        String order = "schedule-" + UUID.randomUUID();
        storeOrder(order);
        AlipaySimulator alipay = AlipaySimulator.configured();

        List<RetrySchedule.Attempt> attempts = alipay.deliverOnSchedule(
                alipay.notification(order, "2026" + order, "TRADE_SUCCESS", AMOUNT), COMPRESSION, attempt -> { });

        assertEquals(1, attempts.size());
        assertEquals("success", attempts.get(0).body());
    }

    @Test
    void alipayRetriesItsWholeScheduleWhileTheOrderIsUnknown() {
        String order = "schedule-never-" + UUID.randomUUID();
        AlipaySimulator alipay = AlipaySimulator.configured();

        List<RetrySchedule.Attempt> attempts = alipay.deliverOnSchedule(
                alipay.notification(order, "2026" + order, "TRADE_SUCCESS", AMOUNT), COMPRESSION, attempt -> { });

        assertEquals(AlipaySimulator.SCHEDULE.delays().size() + 1, attempts.size());
        attempts.forEach(attempt -> assertEquals("failure", attempt.body()));
    }
}
