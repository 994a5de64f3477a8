package dev.idem.ops;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What an operator sets: the admin token, archiving and retention, reconciliation, the console and
 * the dead letters ({@code idem.admin.*}, {@code idem.archive.*}, {@code idem.dedup.*},
 * {@code idem.reconciliation.*}, {@code idem.console.*}, {@code idem.dead-letters.*}, {@code idem.tracing.*}).
 */
@ConfigMapping(prefix = "idem")
public interface OpsConfig {

    Admin admin();

    Archive archive();

    Dedup dedup();

    Reconciliation reconciliation();

    Console console();

    DeadLetters deadLetters();

    Tracing tracing();

    /** Where traces go besides Quarkus' own OTLP settings ({@code quarkus.otel.*}), and where people read them. */
    interface Tracing {
        /** A Zipkin server's span endpoint, such as {@code http://127.0.0.1:9411/api/v2/spans}; none: no Zipkin export. */
        Optional<URI> zipkinEndpoint();

        /**
         * A trace's page in a trace UI, {@code {traceId}} standing for its id: the console links key
         * trails to it. By default Zipkin's own page when {@code zipkin-endpoint} is set.
         */
        Optional<String> traceUrl();

        /** {@link #traceUrl}, or Zipkin's page for a trace of {@link #zipkinEndpoint}. */
        default Optional<String> traceUrlOrZipkin() {
            return traceUrl().or(() -> zipkinEndpoint()
                    .map(endpoint -> endpoint.getScheme() + "://" + endpoint.getRawAuthority() + "/zipkin/traces/{traceId}"));
        }
    }

    interface Admin {
        /**
         * Without an identity provider, the token admin requests must carry (none outside dev and
         * test: admin stays closed); beside one, a break-glass token that acts as an operator.
         */
        Optional<String> token();

        /** Entries of the audit trail older than this move to {@code admin_audit_archive}; none: they stay. */
        Optional<Duration> auditRetention();
    }

    /**
     * The outbox's own retention; the rest are the documented names of the pipeline's
     * {@code idem.pipeline.archive.*}, which application.properties sets from them. The service
     * reads those through {@code PipelineConfig}: they are declared here only so that setting them
     * is accepted (every {@code idem.*} key must belong to a root).
     */
    interface Archive {
        /** How long published outbox events stay in the hot table. */
        @WithDefault("7d")
        Duration outboxRetention();

        /** {@code idem.pipeline.archive.interval}: how often events and records are archived ({@code off}: never). */
        Optional<String> interval();

        /** {@code idem.pipeline.archive.batch-size}: rows moved per statement. */
        OptionalInt batchSize();

        /** {@code idem.pipeline.archive.max-batches}: batches per run at most. */
        OptionalInt maxBatches();
    }

    /** The documented name of {@code idem.pipeline.retention}, which application.properties sets from it. */
    interface Dedup {
        /** How long dedup records stay in the hot table. */
        Optional<Duration> retention();
    }

    interface Reconciliation {
        /** How long a grant may take from PAID to coupon, or an event to leave the outbox, before it is a finding. */
        @WithDefault("60s")
        Duration grace();

        /** Samples listed per check. */
        @WithDefault("10")
        int samples();

        /** How often the findings are recomputed for the gauges. */
        @WithDefault("60s")
        Duration interval();
    }

    /** The operator console: its sign-in, with an identity provider, and its short history, kept in memory by each instance. */
    interface Console {
        /** The provider's client the console signs in as: public, authorization code flow with PKCE. */
        @WithDefault("idem-console")
        String clientId();

        /**
         * Encrypts the sign-in's state and session cookies (32 characters or more). Instances behind one
         * address must share it; unset, each instance makes its own at start, and a restart signs everyone out.
         */
        Optional<String> sessionSecret();

        /** Marks the session cookie {@code Secure}; off only for plain HTTP outside loopback trials. */
        @WithDefault("true")
        boolean secureCookie();

        /** How often the counters are sampled: one bar of the console's charts. */
        @WithDefault("10s")
        Duration sampleInterval();

        /** How far back the charts reach; older samples are dropped. */
        @WithDefault("1h")
        Duration history();
    }

    interface DeadLetters {
        /** The channels whose dead letters the admin endpoints list and re-drive, by channel name. */
        Map<String, Channel> channels();

        /** Dead letters listed when the request names no limit. */
        @WithDefault("100")
        int defaultLimit();

        /** The most dead letters one listing holds, whatever the request asks. */
        @WithDefault("1000")
        int maxLimit();

        /** How long a read of a dead-letter topic may wait for Kafka without getting a batch further (then 503). */
        @WithDefault("30s")
        Duration readTimeout();

        /** Dead letters read per poll and re-driven per transaction. */
        @WithDefault("500")
        int batchSize();

        interface Channel {
            /** Where the channel's consumer reads, and where its dead letters are re-driven to. */
            String topic();

            /** Where the channel's consumer sends poison. */
            String deadLetterTopic();
        }
    }
}
