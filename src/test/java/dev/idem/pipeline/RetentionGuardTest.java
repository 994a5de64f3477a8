package dev.idem.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RetentionGuardTest {

    record Scope(Optional<Duration> redisTtl, Optional<Duration> retention, Optional<Duration> concurrentWait)
            implements PipelineConfig.Scope {}

    record Config(Duration redisTtl, Map<String, PipelineConfig.Scope> scopes) implements PipelineConfig {
        public String redisPrefix() { return "idem"; }
        public Duration redisBudget() { return Duration.ofMillis(100); }
        public Duration redisBatchBudget() { return Duration.ofSeconds(1); }
        public Duration inFlightRetryAfter() { return Duration.ofSeconds(1); }
        public GroupCommit groupCommit() { return null; }
    }

    static Scope scope(String ttl, String retention) {
        return new Scope(Optional.ofNullable(ttl).map(Duration::parse), Optional.ofNullable(retention).map(Duration::parse),
                Optional.empty());
    }

    @Test
    void theDefaultsAreAccepted() {
        Config config = new Config(Duration.ofHours(26), Map.of(
                "payment-callback", scope("PT26H", null),
                "order-submit", scope("PT24H", "PT24H")));
        assertEquals(List.of(), RetentionGuard.problems(config, Duration.ofDays(7)));
    }

    @Test
    void aRetentionShorterThanARedisTtlIsNamed() {
        Config config = new Config(Duration.ofHours(26), Map.of("payment-callback", scope("PT72H", null)));
        List<String> problems = RetentionGuard.problems(config, Duration.ofDays(2));
        assertEquals(1, problems.size());
        assertTrue(problems.get(0).contains("payment-callback"), problems.get(0));
    }

    @Test
    void theDefaultRetentionMustOutlastTheDefaultTtl() {
        Config config = new Config(Duration.ofDays(8), Map.of());
        assertEquals(1, RetentionGuard.problems(config, Duration.ofDays(7)).size());
    }
}
