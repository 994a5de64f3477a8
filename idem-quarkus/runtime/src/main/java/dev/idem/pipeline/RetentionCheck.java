package dev.idem.pipeline;

import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Refuses to start when a dedup record could be archived while Redis (or a retrying source) still
 * counts on it: a late duplicate would then meet neither layer.
 */
@ApplicationScoped
class RetentionCheck {

    void check(@Observes StartupEvent start, PipelineConfig pipeline) {
        List<String> problems = problems(pipeline);
        if (!problems.isEmpty()) {
            throw new IllegalStateException("Refusing to start: " + String.join("; ", problems));
        }
    }

    static List<String> problems(PipelineConfig pipeline) {
        Duration defaultRetention = pipeline.retention();
        List<String> problems = new ArrayList<>();
        if (defaultRetention.compareTo(pipeline.redisTtl()) < 0) {
            problems.add("idem.pipeline.retention (" + defaultRetention + ") is shorter than idem.pipeline.redis-ttl ("
                    + pipeline.redisTtl() + ")");
        }
        for (Map.Entry<String, PipelineConfig.Scope> scope : pipeline.scopes().entrySet()) {
            String name = scope.getKey();
            Duration retention = scope.getValue().retention().orElse(defaultRetention);
            Duration ttl = pipeline.redisTtl(name);
            if (retention.compareTo(ttl) < 0) {
                problems.add("the retention of scope " + name + " (" + retention
                        + ") is shorter than its Redis TTL (" + ttl + ")");
            }
        }
        return problems;
    }
}
