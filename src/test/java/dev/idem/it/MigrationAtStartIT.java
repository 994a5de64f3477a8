package dev.idem.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a started instance promises about its schema: every migration of its build applied before it
 * answers anything, and no start at all when one fails. The schema is migrated beside the wiring
 * of the Kafka channels (ops.MigrateAtStart), so these are the service's promises, not Flyway's.
 * Each start gets an empty database of its own ({@code idem_start_test}) and leaves the shared
 * topics alone: no consumer, no relay.
 */
class MigrationAtStartIT {

    static final String DATABASE = "postgresql://127.0.0.1:5432/idem_start_test";
    static final Path BASEDIR = Path.of(System.getProperty("basedir", "."));
    static final Duration START = Duration.ofSeconds(90);

    final Jdbc db = new Jdbc("jdbc:" + DATABASE, "idem", "idem");
    ServiceProcess service;

    @AfterEach
    void stop() {
        ServiceProcess.stopAll(service);
    }

    @Test
    void readyMeansEveryMigrationOfTheBuildIsApplied() throws Exception {
        emptySchema();

        service = ServiceProcess.start("migration-fresh", env()).awaitReady(START);

        assertEquals(versionsInTheBuild(), db.strings(
                "SELECT version FROM flyway_schema_history WHERE success AND version IS NOT NULL ORDER BY installed_rank"));
        assertEquals(List.of("db/idem/R__idem_pipeline_tables.sql"),
                db.strings("SELECT script FROM flyway_schema_history WHERE success AND version IS NULL"));
        assertEquals(0, db.count("SELECT count(*) FROM flyway_schema_history WHERE NOT success"));

        // a user and key of their own: Redis keeps earlier runs' answers for a key, whatever the database holds
        String user = "migration-" + UUID.randomUUID();
        HttpRequest submit = HttpRequest.newBuilder(service.uri("/api/orders"))
                .header("Content-Type", "application/json")
                .header("X-User-Id", user)
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .POST(HttpRequest.BodyPublishers.ofString("{\"amountCents\":1999,\"currency\":\"CNY\"}"))
                .build();
        HttpResponse<String> answer = HttpClient.newHttpClient().send(submit, HttpResponse.BodyHandlers.ofString());
        assertEquals(201, answer.statusCode(), answer.body());
        assertEquals(1, db.count("SELECT count(*) FROM orders WHERE user_id = ?", user));
    }

    @Test
    void aMigrationThatNoLongerValidatesStopsTheStart() throws IOException {
        emptySchema();
        service = ServiceProcess.start("migration-edited", env()).awaitReady(START);
        assertTrue(service.stop(Duration.ofSeconds(30)).isPresent(), "did not stop on SIGTERM");
        // as if V1 had been edited after it was applied
        db.execute("UPDATE flyway_schema_history SET checksum = checksum + 1 WHERE version = '1'");

        int exit = service.restart().awaitExitNeverReady(START);

        assertNotEquals(0, exit, "the start went on past a failed migration");
        assertTrue(Files.readString(service.log()).contains("checksum mismatch for migration version 1"),
                "the log does not say why:\n" + service.logTail());
    }

    void emptySchema() {
        db.execute("DROP SCHEMA public CASCADE", "CREATE SCHEMA public");
    }

    /** The versioned migrations in the sources, in version order, as Flyway records them. */
    static List<String> versionsInTheBuild() throws IOException {
        Pattern versioned = Pattern.compile("V(\\d+)__.+\\.sql");
        try (Stream<Path> files = Files.list(BASEDIR.resolve("src/main/resources/db/migration"))) {
            return files.map(f -> versioned.matcher(f.getFileName().toString()))
                    .filter(Matcher::matches)
                    .map(m -> m.group(1))
                    .sorted(Comparator.comparingInt(Integer::parseInt))
                    .toList();
        }
    }

    /**
     * The deployment's secrets and servers; the consumers and the relay off through a config file,
     * since a channel's own keys ({@code coupon-grants}) have no environment-variable form.
     */
    static Map<String, String> env() throws IOException {
        Path config = BASEDIR.resolve("target/it-config/migration-at-start.properties").toAbsolutePath();
        Files.createDirectories(config.getParent());
        Files.writeString(config, """
                mp.messaging.incoming.coupon-grants.enabled=false
                mp.messaging.incoming.payment-callbacks.enabled=false
                idem.outbox.relay-enabled=false
                idem.pipeline.recovery-interval=off
                """);
        return Map.of(
                "IDEM_CALLBACK_SECRET", "it-callback-secret",
                "IDEM_ADMIN_TOKEN", "it-admin-token",
                "QUARKUS_DATASOURCE_REACTIVE_URL", DATABASE,
                "QUARKUS_REDIS_HOSTS", "redis://127.0.0.1:6379/6",
                "QUARKUS_CONFIG_LOCATIONS", config.toUri().toString());
    }
}
