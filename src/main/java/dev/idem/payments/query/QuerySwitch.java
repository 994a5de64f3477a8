package dev.idem.payments.query;

import io.quarkus.logging.Log;

/**
 * Whether a gateway's orders are queried. {@code …query.enabled} unset: when the gateway is on
 * (its notifications' keys are set) and so are the keys that sign its requests; a gateway on
 * without them is said once at start-up. Set to {@code true} where the query cannot work, or with
 * a rate below one, it stops the start.
 */
public final class QuerySwitch {

    private QuerySwitch() {}

    /**
     * @param gateway   the configuration prefix, e.g. {@code idem.gateways.wechatpay}
     * @param gatewayOn whether the gateway's notifications are on
     * @param keysSet   whether every key that signs its requests is set
     * @param keyNames  those keys' names, for the messages
     */
    public static boolean enabled(String gateway, GatewayQueriesConfig.Query query, boolean gatewayOn, boolean keysSet,
                                  String keyNames) {
        boolean asked = query.enabled().orElse(gatewayOn && keysSet);
        if (asked && !gatewayOn) {
            throw new IllegalStateException(gateway + ".query.enabled=true needs the gateway on: its answers are "
                    + "verified with the keys that verify its notifications");
        }
        if (asked && !keysSet) {
            throw new IllegalStateException(gateway + ".query.enabled=true needs " + keyNames);
        }
        if (asked && query.rate() < 1) {
            throw new IllegalStateException(gateway + ".query.rate must be at least 1 query per second");
        }
        if (gatewayOn && !keysSet && query.enabled().isEmpty()) {
            Log.warnf("%s is on, but orders are not queried there: set %s to find payments whose notification "
                    + "never came", gateway, keyNames);
        }
        return asked;
    }
}
