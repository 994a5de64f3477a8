package dev.idem.extension.it;

import static dev.idem.extension.it.Http.voucher;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.pipeline.KafkaTestClient.ReadRecord;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Kafka records are read as a consumer must while its producers evolve: members the type does not
 * declare are ignored (ledger-postings), or refused where the channel asks for strict reading
 * (voucher-grants); a missing member and a Jakarta constraint broken dead-letter the record with a
 * reason that names the member and the rule.
 */
@QuarkusTest
class RecordReadingTest {

    @Inject
    Pool pool;

    Db db;
    KafkaTestClient kafka;
    String run;

    @BeforeEach
    void setUp() {
        db = new Db(pool);
        kafka = new KafkaTestClient();
        run = UUID.randomUUID().toString();
    }

    @AfterEach
    void tearDown() {
        kafka.close();
    }

    @Test
    void aPostingWithMembersItsTypeDoesNotDeclareIsAppliedAndOneThatBreaksARuleIsDeadLetteredNamingIt() {
        Channel ledger = Channel.of("ledger-postings");
        String account = "account-" + run;
        Map<String, String> values = Map.of(
                "newer-" + run, "{\"ref\":\"newer-" + run + "\",\"account\":\"" + account + "\",\"amount\":7,"
                        + "\"currency\":\"EUR\",\"memo\":{\"lines\":[1,2]},\"traceTags\":[\"a\"]}",
                "no-account-" + run, "{\"ref\":\"no-account-" + run + "\",\"amount\":7}",
                "no-amount-" + run, "{\"ref\":\"no-amount-" + run + "\",\"account\":\"" + account + "\"}",
                "blank-account-" + run, "{\"ref\":\"blank-account-" + run + "\",\"account\":\" \",\"amount\":7}",
                "text-amount-" + run, "{\"ref\":\"text-amount-" + run + "\",\"account\":\"" + account + "\",\"amount\":\"7\"}");
        Map<String, Long> offsets = new HashMap<>();
        try (LogLines said = LogLines.of("dev.idem.pipeline.kafka.DeadLetterTopic")) {
            values.forEach((key, value) -> {
                RecordMetadata sent = kafka.send(ledger.topic(), 0, key, value);
                offsets.put(key, sent.offset());
                ledger.awaitSettled(sent);
            });
            // where each dead letter came from and went, with its key, in the log too
            String noAccount = "no-account-" + run;
            assertEquals(List.of("WARN ledger-postings: record " + ledger.topic() + "-0@" + offsets.get(noAccount)
                            + " (key " + noAccount + ") sent to " + ledger.deadLetterTopic()
                            + ": POISON: member 'account' is missing or null"),
                    said.startingWith("WARN ledger-postings: record " + ledger.topic() + "-0@" + offsets.get(noAccount) + " "));
        }

        assertEquals(1, db.entries(account), "the posting with three members more was applied, once");
        Map<String, String> reasons = ledger.deadLetters(kafka, "").stream()
                .filter(record -> record.key().endsWith(run))
                .collect(Collectors.toMap(ReadRecord::key, ReadRecord::reason));
        assertEquals(Map.of(
                "no-account-" + run, "POISON: member 'account' is missing or null",
                "no-amount-" + run, "POISON: member 'amount' is missing or null",
                "blank-account-" + run, "POISON: member 'account' must not be blank",
                "text-amount-" + run, "POISON: member 'amount' has the wrong type or format: a whole number is expected"),
                reasons);
    }

    @Test
    void aChannelThatAsksForStrictReadingRefusesAMemberItsTypeDoesNotDeclare() {
        Channel vouchers = Channel.of("voucher-grants");
        String code = "strict-" + run;
        String value = "{\"code\":\"" + code + "\",\"holder\":\"h\",\"amount\":5,\"colour\":\"red\"}";
        vouchers.awaitSettled(kafka.send(vouchers.topic(), 0, code, value));

        List<ReadRecord> dead = vouchers.deadLetters(kafka, code);
        assertEquals(List.of("POISON: unknown member 'colour'"), dead.stream().map(ReadRecord::reason).toList());
        assertEquals(0, db.vouchers(code));
        String plain = "plain-" + run;
        vouchers.awaitSettled(kafka.send(vouchers.topic(), 0, plain, voucher(plain, "h", 5)));
        assertEquals(1, db.vouchers(plain));
    }
}
