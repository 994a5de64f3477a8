package dev.idem.extension.it;

import static org.awaitility.Awaitility.await;

import dev.idem.pipeline.KafkaTestClient;
import dev.idem.pipeline.KafkaTestClient.ReadRecord;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * An {@code @Incoming} channel as application.properties configures it; records go to its topic
 * through the kit's {@link KafkaTestClient}.
 */
record Channel(String name, String topic, String group) {

    /** Every idem-it-* topic, and its -dlq, has four partitions (./idem services up). */
    static final int PARTITIONS = 4;
    static final Duration PATIENCE = Duration.ofSeconds(120);

    static Channel of(String name) {
        Config config = ConfigProvider.getConfig();
        String prefix = "mp.messaging.incoming." + name + ".";
        return new Channel(name, config.getValue(prefix + "topic", String.class),
                config.getValue(prefix + "group.id", String.class));
    }

    /** The dead-letter topic the extension gives the channel. */
    String deadLetterTopic() {
        return topic + "-dlq";
    }

    /** The records of the channel's dead-letter topic whose key starts with {@code prefix}, read to its current end. */
    List<ReadRecord> deadLetters(KafkaTestClient kafka, String prefix) {
        return kafka.readAll(deadLetterTopic()).stream()
                .filter(record -> record.key() != null && record.key().startsWith(prefix))
                .toList();
    }

    /**
     * Waits until the channel's group committed offsets past every one of {@code records}: each
     * was acked (applied, judged a duplicate, or dead-lettered), and every record before it on its
     * partition too.
     */
    void awaitSettled(List<RecordMetadata> records) {
        String bootstrap = ConfigProvider.getConfig().getValue("kafka.bootstrap.servers", String.class);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            await().atMost(PATIENCE).until(() -> {
                Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                        .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
                return records.stream().allMatch(record -> {
                    OffsetAndMetadata offset = committed.get(new TopicPartition(record.topic(), record.partition()));
                    return offset != null && offset.offset() > record.offset();
                });
            });
        }
    }

    void awaitSettled(RecordMetadata record) {
        awaitSettled(List.of(record));
    }
}
