package dev.idem.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.pipeline.KafkaTestClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The artifact configured as a container is: through environment variables, among them the Kafka
 * channels' settings that the extension gives them and that {@code application.properties} does not
 * name. A dashed channel's variable is only read as that channel when some source names its
 * property; before, {@code MP_MESSAGING_INCOMING_PAYMENT_CALLBACKS_AUTO_OFFSET_RESET} stopped the
 * start ("the connector attribute must be set for channel payment").
 */
class ConfiguredByEnvironmentIT {

    static final Duration READY = Duration.ofSeconds(90);

    ServiceProcess service;

    @AfterEach
    void stop() {
        ServiceProcess.stopAll(service);
    }

    @Test
    void theExtensionsChannelSettingsCanBeSetByEnvironmentVariables() {
        String run = "env-it-" + UUID.randomUUID();
        String topic = run + "-callbacks";
        String deadLetters = run + "-dead-letters";
        Map<String, String> env = new HashMap<>(TwoInstancesIT.ENV);
        env.put("MP_MESSAGING_INCOMING_PAYMENT_CALLBACKS_TOPIC", topic);
        env.put("MP_MESSAGING_INCOMING_PAYMENT_CALLBACKS_GROUP_ID", run);
        // settings only the extension names: the offset reset, the poll, and where poison goes
        env.put("MP_MESSAGING_INCOMING_PAYMENT_CALLBACKS_AUTO_OFFSET_RESET", "earliest");
        env.put("MP_MESSAGING_INCOMING_PAYMENT_CALLBACKS_POLL_TIMEOUT", "200");
        env.put("MP_MESSAGING_INCOMING_PAYMENT_CALLBACKS_DEAD_LETTER_QUEUE_TOPIC", deadLetters);
        env.put("MP_MESSAGING_INCOMING_COUPON_GRANTS_GROUP_ID", run + "-grants");
        env.put("MP_MESSAGING_INCOMING_COUPON_GRANTS_POLL_TIMEOUT", "200");
        service = ServiceProcess.start("configured-by-environment", env).awaitReady(READY);

        try (KafkaTestClient kafka = new KafkaTestClient()) {
            kafka.send(topic, null, "poison-" + run, "not json");
            KafkaTestClient.ReadRecord dead = await("the poison in " + deadLetters).atMost(READY)
                    .until(() -> kafka.readAll(deadLetters), records -> !records.isEmpty()).get(0);
            assertEquals("poison-" + run, dead.key());
            assertTrue(dead.reason().startsWith("POISON"), dead.reason());
            assertEquals(List.of(), kafka.readAll(topic + "-dlq"), "the default dead-letter topic, overridden");
        }
    }
}
