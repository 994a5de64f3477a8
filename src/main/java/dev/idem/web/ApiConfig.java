package dev.idem.web;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * What a client of the HTTP API meets: the request limits ({@code idem.http.*}), who the caller is
 * ({@code idem.identity}) and the two submit guards, one-time tokens ({@code idem.token.*}) and
 * Idempotency-Key answers ({@code idem.key.*}).
 */
@ConfigMapping(prefix = "idem")
public interface ApiConfig {

    Http http();

    Token token();

    /**
     * Where a user endpoint takes its caller from: {@code header}, the {@code X-User-Id} of a gateway
     * that authenticated the user; {@code jwt}, the {@code sub} of a bearer access token verified
     * against the OpenID Connect provider ({@code quarkus.oidc.auth-server-url}, audience
     * {@code idem-api}), {@code X-User-Id} ignored.
     */
    @WithDefault("header")
    Identity identity();

    enum Identity { HEADER, JWT }

    Key key();

    /** The service's own request limits, answered as problem+json; the HTTP layer's are set above them. */
    interface Http {
        /** The longest request target (path and query) served: longer is 414 {@code URI_TOO_LONG}. */
        @WithDefault("4096")
        int maxRequestTargetLength();

        /** The most header bytes a request may carry: more is 431 {@code HEADERS_TOO_LARGE}. */
        @WithDefault("20K")
        MemorySize maxHeadersSize();

        /** The largest request body: more is 413 {@code PAYLOAD_TOO_LARGE}. */
        @WithDefault("64K")
        MemorySize maxBodySize();

        /**
         * The largest gateway bill an operator may give as a file (a day's WeChat Pay CSV is about
         * 250 bytes a line). {@code quarkus.http.limits.max-body-size} must not be below it.
         */
        @WithDefault("64M")
        MemorySize maxBillSize();
    }

    interface Token {
        /** How long a submit token lives: longer than a front-end session keeps a form open. */
        @WithDefault("30m")
        Duration ttl();
    }

    interface Key {
        /**
         * How long an Idempotency-Key answer is replayed: the pipeline's {@code order-submit} scope
         * takes it as its Redis TTL and retention (application.properties).
         */
        @WithDefault("24h")
        Duration retention();
    }
}
