package dev.idem.payments;

import static dev.idem.testing.Callbacks.deliver;
import static dev.idem.testing.Callbacks.newOrder;
import static dev.idem.testing.Gateway.callback;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Item;
import dev.idem.pipeline.Layer;
import dev.idem.pipeline.Outcome;
import dev.idem.pipeline.PipelineConfig;
import dev.idem.pipeline.Work;
import io.quarkus.redis.datasource.RedisDataSource;
import dev.idem.testing.Db;
import dev.idem.testing.Metrics;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Payments sharing one transaction (a batch: one transaction for all its deliveries that Redis
 * could not answer): each gets the outcome it would have had alone, and the transaction keeps
 * exactly the effects of the deliveries that took one.
 */
@QuarkusTest
class GroupedPaymentsTest {

    static final Map<String, String> CONFLICT = Map.of("reason", "conflict");

    @Inject
    IdempotencyPipeline pipeline;

    @Inject
    RedisDataSource redis;

    @Inject
    PipelineConfig config;

    @Inject
    PaymentService payments;

    @Inject
    Db db;

    final String user = "group-" + UUID.randomUUID();

    /** The four kinds of delivery of one group, and what each must leave behind. */
    record Four(String fresh, String mismatched, String unknown, String paid, List<PaymentCallback> callbacks) {}

    Four four() {
        String fresh = newOrder(user, 1999);
        String mismatched = newOrder(user, 1999);
        String unknown = "no-such-order-" + UUID.randomUUID();
        String paid = newOrder(user, 1999);
        deliver(callback("T-" + paid, paid, 1999, "SUCCESS")).then().statusCode(200);
        return new Four(fresh, mismatched, unknown, paid, List.of(
                payment(fresh, 1999), payment(mismatched, 1), payment(unknown, 1999), payment(paid, 1999)));
    }

    /** The payment's own work, as {@link PaymentService#apply} hands it to the pipeline. */
    Work work(PaymentCallback callback) {
        return tx -> payments.transition(tx, callback, null);
    }

    static PaymentCallback payment(String order, long amountCents) {
        return new PaymentCallback("T-" + order, order, amountCents, PaymentCallback.SUCCESS, Instant.now());
    }

    /**
     * The callbacks as one batch. The paid order's key is DONE in Postgres; in Redis it is either
     * absent (the batch claims it, so its work runs before its record is met) or PROCESSING (a
     * suspect: its record is looked up before any work runs). Both ways Redis cannot answer it.
     */
    List<Outcome> run(List<PaymentCallback> callbacks, boolean paidIsSuspect) {
        String paidKey = config.redisPrefix() + ":" + PaymentService.SCOPE + ":"
                + callbacks.get(3).idemRequest(PaymentService.SCOPE).key();
        if (paidIsSuspect) {
            redis.value(String.class).set(paidKey, "PROCESSING");
        } else {
            redis.key(String.class).del(paidKey);
        }
        return pipeline.executeAll(callbacks.stream()
                        .map(c -> new Item(c.idemRequest(PaymentService.SCOPE), work(c)))
                        .toList())
                .await().atMost(Duration.ofSeconds(30));
    }


    @Test
    void anAnomalyARefusalAndADuplicateRedisLostSettleAsIfAlone() {
        Four four = four();
        Metrics before = Metrics.scrape();

        // the paid order's record exists but Redis did not say so: its work runs, meets the
        // record, and the group runs again without it
        List<Outcome> settled = run(four.callbacks(), false);

        assertInstanceOf(Outcome.Processed.class, settled.get(0));
        assertEquals("AMOUNT_MISMATCH", assertInstanceOf(Outcome.Anomaly.class, settled.get(1)).kind());
        assertEquals("ORDER_NOT_FOUND", assertInstanceOf(Outcome.Rejected.class, settled.get(2)).reason());
        assertEquals(Layer.DB, assertInstanceOf(Outcome.Duplicate.class, settled.get(3)).layer());
        assertEquals(1, Metrics.scrape().delta(before, "idem_pipeline_group_retries_total", CONFLICT));
        assertEachLeftWhatItShould(four);

        // the same group again: everything is a duplicate now, nothing changes
        List<Outcome> again = run(four.callbacks(), true);
        assertInstanceOf(Outcome.Duplicate.class, again.get(0));
        assertInstanceOf(Outcome.Duplicate.class, again.get(1));
        assertInstanceOf(Outcome.Rejected.class, again.get(2));
        assertInstanceOf(Outcome.Duplicate.class, again.get(3));
        assertEachLeftWhatItShould(four);
    }

    @Test
    void aDuplicateRedisHintedAtIsFoundBeforeAnyWorkRuns() {
        Four four = four();
        Metrics before = Metrics.scrape();

        List<Outcome> settled = run(four.callbacks(), true);

        assertInstanceOf(Outcome.Processed.class, settled.get(0));
        assertInstanceOf(Outcome.Anomaly.class, settled.get(1));
        assertInstanceOf(Outcome.Rejected.class, settled.get(2));
        assertEquals(Layer.DB, assertInstanceOf(Outcome.Duplicate.class, settled.get(3)).layer());
        assertEquals(0, Metrics.scrape().delta(before, "idem_pipeline_group_retries_total", CONFLICT));
        assertEachLeftWhatItShould(four);
    }

    @Test
    void twoGroupsHoldingTheSameKeysAtOnceApplyEachOnce() {
        List<String> orders = List.of(newOrder(user, 1999), newOrder(user, 1999), newOrder(user, 1999));
        List<PaymentCallback> forward = orders.stream().map(o -> payment(o, 1999)).toList();
        List<PaymentCallback> backward = new ArrayList<>(forward);
        Collections.reverse(backward);
        Uni<List<Outcome>> first = pipeline.executeAll(forward.stream()
                .map(c -> new Item(c.idemRequest(PaymentService.SCOPE), work(c))).toList());
        Uni<List<Outcome>> second = pipeline.executeAll(backward.stream()
                .map(c -> new Item(c.idemRequest(PaymentService.SCOPE), work(c))).toList());
        List<List<Outcome>> both = Uni.join().all(first, second).andFailFast()
                .await().atMost(Duration.ofSeconds(30));

        for (int i = 0; i < orders.size(); i++) {
            Outcome a = both.get(0).get(i);
            Outcome b = both.get(1).get(orders.size() - 1 - i);
            long processed = Stream.of(a, b).filter(Outcome.Processed.class::isInstance).count();
            assertEquals(1, processed, "one of the two applied order " + orders.get(i) + ": " + a + " / " + b);
            assertEquals(1, db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1", "paid:" + orders.get(i)));
            assertEquals(1, db.count("SELECT count(*) FROM dedup_record WHERE scope = $1 AND key = $2",
                    PaymentService.SCOPE, "T-" + orders.get(i) + ":SUCCESS"));
        }
        assertEquals(3, db.count("SELECT count(*) FROM orders WHERE user_id = $1 AND status = 'PAID'", user));
    }

    void assertEachLeftWhatItShould(Four four) {
        assertEquals("PAID", status(four.fresh()));
        assertEquals(1, events(four.fresh()));
        assertEquals("DONE", record(four.fresh()));

        assertEquals("WAIT_PAY", status(four.mismatched()));
        assertEquals(0, events(four.mismatched()));
        assertEquals(1, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = $1", four.mismatched()));
        assertEquals("DONE", record(four.mismatched()));

        assertEquals(0, db.count("SELECT count(*) FROM dedup_record WHERE key = $1", "T-" + four.unknown() + ":SUCCESS"));

        assertEquals("PAID", status(four.paid()));
        assertEquals(1, events(four.paid()));
        assertEquals(0, db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = $1", four.paid()));
    }

    String status(String order) {
        return db.string("SELECT status FROM orders WHERE id = $1", order);
    }

    long events(String order) {
        return db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1", "paid:" + order);
    }

    String record(String order) {
        return db.string("SELECT status FROM dedup_record WHERE scope = $1 AND key = $2",
                PaymentService.SCOPE, "T-" + order + ":SUCCESS");
    }
}
