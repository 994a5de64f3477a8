package dev.idem.orders;

import java.util.Arrays;
import java.util.Optional;

/** The gateways an order's payment can go through, by the name the API and the database use. */
public enum PaymentGateway {
    WECHATPAY("wechatpay"),
    ALIPAY("alipay");

    private final String id;

    PaymentGateway(String id) {
        this.id = id;
    }

    public String id() {
        return id;
    }

    public static Optional<PaymentGateway> named(String id) {
        return Arrays.stream(values()).filter(gateway -> gateway.id.equals(id)).findFirst();
    }
}
