package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RetentionCheckTest {

    @Test
    void theDefaultsAreAccepted() {
        PipelineConfig config = Configs.pipeline(Map.of(
                "idem.pipeline.scopes.payment-callback.redis-ttl", "26h",
                "idem.pipeline.scopes.order-submit.redis-ttl", "24h",
                "idem.pipeline.scopes.order-submit.retention", "24h"));
        assertEquals(List.of(), RetentionCheck.problems(config));
    }

    @Test
    void aRetentionShorterThanARedisTtlIsNamed() {
        PipelineConfig config = Configs.pipeline(Map.of(
                "idem.pipeline.retention", "2d",
                "idem.pipeline.scopes.payment-callback.redis-ttl", "72h"));
        List<String> problems = RetentionCheck.problems(config);
        assertEquals(1, problems.size());
        assertTrue(problems.get(0).contains("payment-callback"), problems.get(0));
    }

    @Test
    void theDefaultRetentionMustOutlastTheDefaultTtl() {
        PipelineConfig config = Configs.pipeline(Map.of("idem.pipeline.redis-ttl", "8d"));
        assertEquals(1, RetentionCheck.problems(config).size());
    }
}
