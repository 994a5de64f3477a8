package dev.idem.coupons;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.idem.pipeline.PipelineConfig;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The HTTP client of the external coupon issuer:
 * {@code POST <url>} with {@code {"key","userId","templateId"}} and the header
 * {@code Idempotency-Key: <key>}, answered {@code {"couponId": "..."}}. The key makes a repeated
 * call (after a timeout, a crash, a takeover) return the coupon issued the first time. Calls are
 * non-blocking: the JDK client's future, resumed on the caller's Vert.x context.
 */
@ApplicationScoped
public class ExternalCouponIssuer {

    private final CouponsConfig.CouponIssuer config;
    /** Strict about repeated members: an answer that names {@code couponId} twice is no answer. */
    private final ObjectReader reader;
    private final HttpClient http;

    ExternalCouponIssuer(CouponsConfig config, ObjectMapper mapper) {
        this.config = config.couponIssuer();
        this.reader = mapper.reader().with(StreamReadFeature.STRICT_DUPLICATE_DETECTION);
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(this.config.timeout())
                .build();
    }

    /** Refuses to start with an external issuer that is not configured, or slower than the lease. */
    void check(@Observes StartupEvent start, CouponsConfig coupons, PipelineConfig pipeline) {
        List<String> problems = problems(coupons.campaign(), config, pipeline.lease());
        if (!problems.isEmpty()) {
            throw new IllegalStateException("Refusing to start: " + String.join("; ", problems));
        }
    }

    static List<String> problems(CouponsConfig.Campaign campaign, CouponsConfig.CouponIssuer issuer, Duration lease) {
        List<String> problems = new ArrayList<>();
        if (campaign.paidCouponIssuer() != CouponsConfig.Campaign.Issuer.EXTERNAL) {
            return problems;
        }
        if (issuer.url().isEmpty()) {
            problems.add("idem.campaign.paid-coupon-issuer=external needs idem.coupon-issuer.url");
        }
        if (issuer.timeout().compareTo(lease) >= 0) {
            problems.add("idem.coupon-issuer.timeout (" + issuer.timeout() + ") must be shorter than idem.pipeline.lease ("
                    + lease + "), or a slow answer would be taken over while it is still awaited");
        }
        return problems;
    }

    /** The issuer's coupon id for {@code key}; fails on a transport error, a timeout or a non-2xx answer. */
    public Uni<String> issue(String key, String userId, String templateId) {
        URI url = config.url().orElseThrow(() -> new IllegalStateException("idem.coupon-issuer.url is not set"));
        String body = new JsonObject().put("key", key).put("userId", userId).put("templateId", templateId).encode();
        HttpRequest request = HttpRequest.newBuilder(url)
                .timeout(config.timeout())
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        Context context = Vertx.currentContext();
        Uni<HttpResponse<String>> answer = Uni.createFrom()
                .completionStage(() -> http.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
        if (context != null) {
            answer = answer.emitOn(task -> context.runOnContext(ignored -> task.run()));
        }
        return answer.map(this::couponId);
    }

    private String couponId(HttpResponse<String> response) {
        if (response.statusCode() / 100 != 2) {
            throw new IssuerFailure("the coupon issuer answered " + response.statusCode() + ": " + abbreviate(response.body()));
        }
        String couponId;
        try {
            JsonNode answer = reader.readTree(response.body());
            couponId = answer == null ? null : answer.path("couponId").textValue();
        } catch (IOException | RuntimeException unreadable) {
            throw new IssuerFailure("the coupon issuer answered something else than JSON: " + abbreviate(response.body()));
        }
        if (couponId == null || couponId.isBlank()) {
            throw new IssuerFailure("the coupon issuer answered no couponId: " + abbreviate(response.body()));
        }
        return couponId;
    }

    private static String abbreviate(String text) {
        return text == null || text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }

    /** The issuer did not issue (or did not say so): the attempt failed. */
    static final class IssuerFailure extends RuntimeException {
        IssuerFailure(String message) {
            super(message, null, false, false);
        }
    }
}
