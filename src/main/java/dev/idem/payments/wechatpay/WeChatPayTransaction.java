package dev.idem.payments.wechatpay;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.idem.payments.Notice;
import dev.idem.payments.PaymentCallback;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/** The decrypted {@code transaction}: the members idem reads of WeChat Pay's payment object. */
@RegisterForReflection
@JsonIgnoreProperties(ignoreUnknown = true)
record WeChatPayTransaction(
        @JsonProperty("out_trade_no") String outTradeNo,
        @JsonProperty("transaction_id") String transactionId,
        @JsonProperty("trade_state") String tradeState,
        Amount amount,
        @JsonProperty("success_time") String successTime) {

    @RegisterForReflection
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Amount(Long total, String currency) {}

    /** SUCCESS and CLOSED become a notification; other states (NOTPAY, USERPAYING, ...) change nothing. */
    Notice toNotice() {
        if (blank(outTradeNo) || blank(transactionId) || blank(tradeState)) {
            return new Notice.Unreadable("the transaction needs out_trade_no, transaction_id and trade_state");
        }
        String status;
        if ("SUCCESS".equals(tradeState)) {
            status = PaymentCallback.SUCCESS;
        } else if ("CLOSED".equals(tradeState)) {
            status = PaymentCallback.CLOSED;
        } else {
            return new Notice.Ignored("trade_state " + tradeState);
        }
        if (amount == null || amount.total() == null || amount.total() < 1) {
            return new Notice.Unreadable("the transaction needs a positive amount.total");
        }
        Instant paidAt = null;
        if (successTime != null) {
            try {
                paidAt = OffsetDateTime.parse(successTime).toInstant();
            } catch (DateTimeParseException notRfc3339) {
                return new Notice.Unreadable("success_time must be an RFC 3339 time with an offset");
            }
        }
        PaymentCallback callback = new PaymentCallback(transactionId, outTradeNo, amount.total(), status, paidAt);
        return callback.violation().<Notice>map(Notice.Unreadable::new).orElseGet(() -> new Notice.Payment(callback));
    }

    private static boolean blank(String value) {
        return value == null || value.isBlank();
    }
}
