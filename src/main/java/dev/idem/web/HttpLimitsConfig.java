package dev.idem.web;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** The service's own request limits, answered as problem+json; the HTTP layer's are set above them. */
@ConfigMapping(prefix = "idem.http")
public interface HttpLimitsConfig {
    /** The longest request target (path and query) served: longer is 414 {@code URI_TOO_LONG}. */
    @WithDefault("4096")
    int maxRequestTargetLength();

    /** The most header bytes a request may carry: more is 431 {@code HEADERS_TOO_LARGE}. */
    @WithDefault("20K")
    MemorySize maxHeadersSize();
}
