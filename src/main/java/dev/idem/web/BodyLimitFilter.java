package dev.idem.web;

import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Refuses a declared oversized body before it is read, with the API's own error shape.
 * Bodies without a length are still capped by {@code quarkus.http.limits.max-body-size}.
 */
@Singleton
public class BodyLimitFilter {

    private final long limit;

    BodyLimitFilter(@ConfigProperty(name = "quarkus.http.limits.max-body-size") MemorySize limit) {
        this.limit = limit.asLongValue();
    }

    void register(@Observes Router router) {
        router.route().order(-100).handler(this::limit);
    }

    private void limit(RoutingContext rc) {
        String length = rc.request().getHeader(HttpHeaders.CONTENT_LENGTH);
        if (length != null && tooLong(length)) {
            rc.response().setStatusCode(413)
                    .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
                    .putHeader(HttpHeaders.CONNECTION, "close")
                    .end(new Problem(413, "PAYLOAD_TOO_LARGE",
                            "the request body exceeds " + limit + " bytes").toJson().encode());
            return;
        }
        rc.next();
    }

    private boolean tooLong(String length) {
        try {
            return Long.parseLong(length.trim()) > limit;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
