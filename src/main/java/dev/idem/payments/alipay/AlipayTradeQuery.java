package dev.idem.payments.alipay;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.Optional;

/** The members idem reads of {@code alipay_trade_query_response}. */
@RegisterForReflection
@JsonIgnoreProperties(ignoreUnknown = true)
record AlipayTradeQuery(
        String code,
        String msg,
        @JsonProperty("sub_code") String subCode,
        @JsonProperty("sub_msg") String subMsg,
        @JsonProperty("out_trade_no") String outTradeNo,
        @JsonProperty("trade_no") String tradeNo,
        @JsonProperty("trade_status") String tradeStatus,
        @JsonProperty("total_amount") String totalAmount,
        @JsonProperty("send_pay_date") String sendPayDate) {

    /** The trade under the names a notification gives its members: the payment's time is {@code gmt_payment}. */
    Optional<String> asNotified(String name) {
        return Optional.ofNullable(switch (name) {
            case "trade_status" -> tradeStatus;
            case "out_trade_no" -> outTradeNo;
            case "trade_no" -> tradeNo;
            case "total_amount" -> totalAmount;
            case "gmt_payment" -> sendPayDate;
            default -> null;
        });
    }
}
