package dev.idem.extension.it;

import static dev.idem.extension.it.Http.posting;
import static dev.idem.extension.it.Http.voucher;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.extension.it.Cache.Loss;
import dev.idem.pipeline.KafkaTestClient;
import dev.idem.pipeline.KafkaTestClient.ReadRecord;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.List;
import java.util.UUID;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A record delivered again after Redis lost its key (deleted, expired, flushed) changes nothing
 * and is acked: its key's record in Postgres says it was applied, whether or not the work's own
 * tables would have refused it. Without that record, a work its table refuses is dead-lettered
 * once, not retried for ever.
 */
@QuarkusTest
class LostRedisEntryKafkaTest {

    @Inject
    Counters counters;

    @Inject
    Db db;

    @Inject
    Cache cache;

    @AutoClose
    final KafkaTestClient kafka = new KafkaTestClient();
    final Channel vouchers = Channel.of("voucher-grants");
    final Channel ledger = Channel.of("ledger-postings");

    /** vouchers: the second delivery's insert breaks the table's own unique constraint. */
    @ParameterizedTest
    @EnumSource(Loss.class)
    void aVoucherGrantDeliveredAgainAfterRedisLostItsKeyIsAckedAndChangesNothing(Loss loss) {
        String code = "kafka-" + loss + "-" + UUID.randomUUID();
        deliveredAgainAfterLoss(loss, vouchers, "voucher-grant", code, voucher(code, "holder", 25),
                () -> db.vouchers(code));
    }

    /** ledger: nothing in the table refuses a second entry; only the key's record does. */
    @ParameterizedTest
    @EnumSource(Loss.class)
    void aLedgerPostingDeliveredAgainAfterRedisLostItsKeyIsAckedAndChangesNothing(Loss loss) {
        String ref = "kafka-" + loss + "-" + UUID.randomUUID();
        String account = "account-" + ref;
        deliveredAgainAfterLoss(loss, ledger, "ledger-posting", ref, posting(ref, account, 40),
                () -> db.entries(account));
    }

    @Test
    void aVoucherGrantedBeforeWhoseKeyHasNoRecordLeftIsDeadLetteredOnceAsAUniqueViolation() {
        String code = "kafka-archived-" + UUID.randomUUID();
        String value = voucher(code, "holder", 25);
        vouchers.awaitSettled(kafka.send(vouchers.topic(), 0, code, value));
        String redisKey = cache.key("voucher-grant", code);
        cache.awaitDone(redisKey);

        db.forgetRecord("voucher-grant", code);
        Loss.DELETED.lose(cache, redisKey);
        double retries = counters.retries(vouchers.name());

        vouchers.awaitSettled(kafka.send(vouchers.topic(), 1, code, value));

        List<ReadRecord> dead = vouchers.deadLetters(kafka, code);
        assertEquals(1, dead.size(), dead.toString());
        assertTrue(dead.get(0).reason().startsWith("UNIQUE_VIOLATION"), dead.get(0).reason());
        assertEquals(value, dead.get(0).value(), "the record is kept as it came");
        assertEquals(0, counters.retries(vouchers.name()) - retries, "retrying cannot change it");
        assertEquals(1, db.vouchers(code));
        assertEquals(0, db.records("voucher-grant", code));

        // the partition goes on
        String next = "kafka-after-archived-" + UUID.randomUUID();
        vouchers.awaitSettled(kafka.send(vouchers.topic(), 1, next, voucher(next, "holder", 1)));
        assertEquals(1, db.vouchers(next));
    }

    /**
     * The record on partition 0, applied; Redis loses its key; the same record on partition 1,
     * settled: counted once, nothing dead-lettered, Postgres caught the duplicate.
     */
    private void deliveredAgainAfterLoss(Loss loss, Channel channel, String scope, String key, String value,
                                         LongSupplier rows) {
        channel.awaitSettled(kafka.send(channel.topic(), 0, key, value));
        assertEquals(1, rows.getAsLong());
        String redisKey = cache.key(scope, key);
        cache.awaitDone(redisKey);
        loss.lose(cache, redisKey);
        assertFalse(cache.exists(redisKey), "Redis lost the key");
        double fromDb = counters.duplicatesFromDb(scope);

        channel.awaitSettled(kafka.send(channel.topic(), 1, key, value));

        assertEquals(1, rows.getAsLong(), "the second delivery changed nothing");
        assertEquals(1, counters.duplicatesFromDb(scope) - fromDb, "Postgres caught the duplicate");
        assertEquals(List.of(), channel.deadLetters(kafka, key));
        assertEquals(1, db.records(scope, key));
    }
}
