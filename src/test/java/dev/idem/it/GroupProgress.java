package dev.idem.it;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Where a consumer group stands on a topic, as {@code kafka-consumer-groups --describe} shows it:
 * the topic's end offsets and the group's committed offsets, partition by partition.
 */
final class GroupProgress implements AutoCloseable {

    private static final Supplier<TreeMap<TopicPartition, Long>> BY_PARTITION =
            () -> new TreeMap<>(Comparator.comparingInt(TopicPartition::partition));

    private final Admin admin;

    GroupProgress(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        admin = Admin.create(props);
    }

    /** The offset after the last record of each partition of {@code topic}, now. */
    Map<TopicPartition, Long> endOffsets(String topic) {
        try {
            Map<TopicPartition, OffsetSpec> latest = admin.describeTopics(List.of(topic))
                    .allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions().stream()
                    .collect(Collectors.toMap(p -> new TopicPartition(topic, p.partition()), p -> OffsetSpec.latest()));
            return admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).entrySet().stream()
                    .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset(),
                            (x, y) -> x, BY_PARTITION));
        } catch (Exception e) {
            throw new IllegalStateException("could not read the end offsets of " + topic, e);
        }
    }

    /** The group's committed offset per partition of {@code topic}; -1 where it committed nothing. */
    Map<TopicPartition, Long> committed(String group, String topic) {
        try {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            return endOffsets(topic).keySet().stream().collect(Collectors.toMap(Function.identity(),
                    tp -> offsets.get(tp) == null ? -1L : offsets.get(tp).offset(), (x, y) -> x, BY_PARTITION));
        } catch (Exception e) {
            throw new IllegalStateException("could not read the offsets of group " + group, e);
        }
    }

    /** Partitions whose committed offset is still before {@code ends}: empty once the group is past them. */
    Map<TopicPartition, String> behind(String group, Map<TopicPartition, Long> ends) {
        String topic = ends.keySet().iterator().next().topic();
        Map<TopicPartition, Long> committed = committed(group, topic);
        Map<TopicPartition, String> behind = new TreeMap<>(Comparator.comparingInt(TopicPartition::partition));
        ends.forEach((tp, end) -> {
            if (committed.getOrDefault(tp, -1L) < end) {
                behind.put(tp, "committed " + committed.get(tp) + " < " + end);
            }
        });
        return behind;
    }

    @Override
    public void close() {
        admin.close();
    }
}
