package dev.idem.payments.wechatpay;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The notification's body (API v3): its {@code resource} carries the encrypted object, a
 * {@code transaction} for payment notifications ({@code event_type} {@code TRANSACTION.SUCCESS}).
 */
@RegisterForReflection
@JsonIgnoreProperties(ignoreUnknown = true)
record WeChatPayNotification(
        String id,
        @JsonProperty("create_time") String createTime,
        @JsonProperty("event_type") String eventType,
        @JsonProperty("resource_type") String resourceType,
        Resource resource,
        String summary) {

    @RegisterForReflection
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Resource(
            String algorithm,
            String ciphertext,
            @JsonProperty("associated_data") String associatedData,
            @JsonProperty("original_type") String originalType,
            String nonce) {}
}
