package dev.idem.extension.it;

import static dev.idem.extension.it.Http.PROBLEM;
import static dev.idem.extension.it.Http.REPLAYED;
import static dev.idem.extension.it.Http.entry;
import static dev.idem.extension.it.Http.post;
import static dev.idem.extension.it.Http.posting;
import static dev.idem.extension.it.Http.voucher;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Copies of one delivery at the same time, over HTTP and over Kafka: one effect each. */
@QuarkusTest
class ConcurrencyTest {

    static final int CLIENTS = 20;

    @Inject
    Pool pool;

    Db db;

    @BeforeEach
    void setUp() {
        db = new Db(pool);
    }

    @Test
    void twentyConcurrentVoucherRequestsWithOneKeyIssueOnce() throws Exception {
        String code = "concurrent-" + UUID.randomUUID();
        oneEffectOfConcurrentRequests("/vouchers", voucher(code, "holder", 5), () -> db.vouchers(code));
    }

    @Test
    void twentyConcurrentLedgerRequestsWithOneKeyEnterOnce() throws Exception {
        String account = "concurrent-" + UUID.randomUUID();
        oneEffectOfConcurrentRequests("/ledger", entry(account, 5), () -> db.entries(account));
    }

    @Test
    void twoHundredLedgerPostingsOfFiftyKeysAcrossPartitionsEnterFifty() throws Exception {
        String run = "storm-" + UUID.randomUUID();
        oneEffectPerKeyOfKafkaCopies(Channel.of("ledger-postings"), run,
                ref -> posting(ref, "account-" + run, 1),
                () -> db.count("SELECT count(*) FROM ledger WHERE account = $1", "account-" + run),
                () -> db.count("SELECT count(DISTINCT ref) FROM ledger WHERE account = $1", "account-" + run));
    }

    @Test
    void twoHundredVoucherGrantsOfFiftyKeysAcrossPartitionsIssueFifty() throws Exception {
        String run = "storm-" + UUID.randomUUID();
        oneEffectPerKeyOfKafkaCopies(Channel.of("voucher-grants"), run,
                code -> voucher(code, "holder-" + run, 1),
                () -> db.count("SELECT count(*) FROM vouchers WHERE holder = $1", "holder-" + run),
                () -> db.count("SELECT count(DISTINCT code) FROM vouchers WHERE holder = $1", "holder-" + run));
    }

    /**
     * {@value #CLIENTS} clients send one request with one key at once: exactly one is processed
     * (201, not replayed), every other is its replay or 409 IDEMPOTENCY_KEY_IN_FLIGHT with
     * Retry-After, and the work took effect once.
     */
    private void oneEffectOfConcurrentRequests(String path, String body, LongSupplier effects) throws Exception {
        String caller = "caller-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        List<Response> answers = atOnce(CLIENTS, () -> post(path, caller, key, body));

        List<Response> processed = answers.stream()
                .filter(a -> a.statusCode() == 201 && a.header(REPLAYED) == null).toList();
        assertEquals(1, processed.size(), "exactly one request was processed");
        byte[] first = processed.get(0).asByteArray();
        for (Response answer : answers) {
            if (answer.statusCode() == 201) {
                assertArrayEquals(first, answer.asByteArray(), "a replay answers what the first request answered");
            } else {
                assertEquals(409, answer.statusCode(), answer.asString());
                assertEquals(PROBLEM, answer.contentType());
                assertEquals("IDEMPOTENCY_KEY_IN_FLIGHT", answer.jsonPath().getString("code"));
                assertTrue(Integer.parseInt(answer.header("Retry-After")) >= 1, answer.header("Retry-After"));
            }
        }
        assertEquals(1, effects.getAsLong());

        Response later = post(path, caller, key, body);
        later.then().statusCode(201).header(REPLAYED, "true");
        assertArrayEquals(first, later.asByteArray());
        assertEquals(1, effects.getAsLong());
    }

    /**
     * Fifty keys, four copies of each, copy c on partition c, the four copies sent by four
     * producers at once, each in its own order: fifty effects, one per key, nothing dead-lettered.
     */
    private void oneEffectPerKeyOfKafkaCopies(Channel channel, String run, Function<String, String> value,
                                              LongSupplier effects, LongSupplier distinctKeys) throws Exception {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            keys.add(run + "-" + i);
        }
        List<RecordMetadata> sent = new ArrayList<>();
        try (KafkaTestClient kafka = new KafkaTestClient()) {
            List<List<RecordMetadata>> copies = atOnce(Channel.PARTITIONS, partition -> {
                List<String> order = new ArrayList<>(keys);
                Collections.shuffle(order, new Random(partition));
                List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
                for (String key : order) {
                    sends.add(kafka.sendAsync(channel.topic(), partition, key, value.apply(key)));
                }
                return sends.stream().map(CompletableFuture::join).toList();
            });
            copies.forEach(sent::addAll);
            assertEquals(200, sent.size());
            channel.awaitSettled(sent);

            assertEquals(50, effects.getAsLong());
            assertEquals(50, distinctKeys.getAsLong());
            assertEquals(List.of(), channel.deadLetters(kafka, run));
        }
    }

    private static <T> List<T> atOnce(int count, Task<T> task) throws Exception {
        return atOnce(count, i -> task.call());
    }

    /** {@code count} threads released together, thread i running {@code task.apply(i)}; their answers in order. */
    private static <T> List<T> atOnce(int count, Indexed<T> task) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(count);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int index = i;
                futures.add(threads.submit(() -> {
                    start.await();
                    return task.apply(index);
                }));
            }
            start.countDown();
            List<T> answers = new ArrayList<>();
            for (Future<T> future : futures) {
                answers.add(future.get());
            }
            return answers;
        } finally {
            threads.shutdown();
        }
    }

    interface Task<T> {
        T call() throws Exception;
    }

    interface Indexed<T> {
        T apply(int index) throws Exception;
    }
}
