package dev.idem.web;

import io.quarkus.logging.Log;
import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.quarkus.security.AuthenticationException;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.HttpException;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.util.Map;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The request's size limits, answered in the API's own error shape before anything reads the
 * request: a long request target (414), large headers (431), a declared oversized body (413).
 * <p>
 * The HTTP layer refuses what is past its own limits with a bare status and no body, and gives the
 * service no say in that answer. So its limits ({@code quarkus.http.limits.max-initial-line-length},
 * {@code .max-header-size}) are set well above these, and only a request past them meets the bare
 * answer. A body without a declared length (chunked) is read here, up to
 * {@code quarkus.http.limits.max-body-size}, so that going past it is a failure this class answers
 * too, as it answers any other failure routed by the HTTP layer.
 */
@Singleton
public class RequestLimits {

    private static final String BILLS = "/admin/reconciliation/gateways/";

    private final int maxTarget;
    private final long maxHeaders;
    private final long maxBody;
    private final long maxBill;
    private final BodyHandler chunkedBodies;
    private final BodyHandler chunkedBills;

    RequestLimits(ApiConfig config,
                  @ConfigProperty(name = "quarkus.http.limits.max-body-size") MemorySize httpMaxBody) {
        this.maxTarget = config.http().maxRequestTargetLength();
        this.maxHeaders = config.http().maxHeadersSize().asLongValue();
        this.maxBody = config.http().maxBodySize().asLongValue();
        this.maxBill = config.http().maxBillSize().asLongValue();
        if (httpMaxBody.asLongValue() < Math.max(maxBody, maxBill)) {
            throw new IllegalStateException("quarkus.http.limits.max-body-size must be at least idem.http.max-body-size "
                    + "and idem.http.max-bill-size");
        }
        this.chunkedBodies = BodyHandler.create(false).setBodyLimit(maxBody);
        this.chunkedBills = BodyHandler.create(false).setBodyLimit(maxBill);
    }

    /** A gateway's bill given as a file may be far larger than any other body. */
    private static boolean bill(HttpServerRequest request) {
        return request.method() == HttpMethod.POST && request.path().startsWith(BILLS);
    }

    void register(@Observes Router router) {
        router.route().order(-100).handler(this::check).failureHandler(this::failed);
    }

    private void check(RoutingContext rc) {
        HttpServerRequest request = rc.request();
        if (request.uri().length() > maxTarget) {
            refuse(rc, new Problem(414, "URI_TOO_LONG", "the request target exceeds " + maxTarget + " characters"));
        } else if (headersSize(request) > maxHeaders) {
            refuse(rc, new Problem(431, "HEADERS_TOO_LARGE", "the request headers exceed " + maxHeaders + " bytes"));
        } else {
            String length = request.getHeader(HttpHeaders.CONTENT_LENGTH);
            long max = bill(request) ? maxBill : maxBody;
            if (length != null && declaredTooLong(length, max)) {
                refuse(rc, new Problem(413, "PAYLOAD_TOO_LARGE", "the request body exceeds " + max + " bytes"));
            } else if (length == null && request.headers().contains(HttpHeaders.TRANSFER_ENCODING)) {
                (bill(request) ? chunkedBills : chunkedBodies).handle(rc);
            } else {
                rc.next();
            }
        }
    }

    /** As the headers took on the wire: name, colon and space, value, line end. */
    private static long headersSize(HttpServerRequest request) {
        long size = 0;
        for (Map.Entry<String, String> header : request.headers()) {
            size += header.getKey().length() + header.getValue().length() + 4;
        }
        return size;
    }

    private static boolean declaredTooLong(String length, long max) {
        try {
            return Long.parseLong(length.trim()) > max;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private void failed(RoutingContext rc) {
        // a sign-in's redirect or challenge travels as a failure that Quarkus' security answers itself
        if (rc.response().headWritten() || rc.response().closed() || rc.failure() instanceof SecurityException
                || rc.failure() instanceof AuthenticationException) {
            rc.next();
            return;
        }
        int status = rc.statusCode() >= 400 ? rc.statusCode()
                : rc.failure() instanceof HttpException http ? http.getStatusCode() : 500;
        if (status >= 500) {
            Log.error("Unexpected failure while serving a request", rc.failure());
        }
        String detail = status == 413 ? "the request body exceeds " + (bill(rc.request()) ? maxBill : maxBody) + " bytes" : status >= 500
                ? "the request could not be served" : "the request was refused by the HTTP layer";
        refuse(rc, new Problem(status, Problem.codeOf(status), detail));
    }

    /** The rest of the request is not read: the connection closes after the answer. */
    private static void refuse(RoutingContext rc, Problem problem) {
        rc.response().setStatusCode(problem.status())
                .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
                .putHeader(HttpHeaders.CONNECTION, "close")
                .end(problem.toJson().encode());
    }
}
