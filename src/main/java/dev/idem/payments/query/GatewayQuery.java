package dev.idem.payments.query;

import dev.idem.orders.PaymentGateway;
import dev.idem.payments.PaymentsConfig;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;

/**
 * One gateway's query of an order by the merchant's order number (the order's id), and whether it
 * is made. {@code …query.enabled} unset: made when the gateway is on (its notifications' keys are
 * set) and so are the keys that sign its requests; a gateway on without them is said once at
 * start-up. Set to {@code true} where the query cannot work, or with a rate below one, it stops the
 * start.
 */
public abstract class GatewayQuery {

    private final PaymentGateway gateway;
    private final PaymentsConfig.Query schedule;
    private final boolean enabled;

    /**
     * @param prefix    the gateway's configuration prefix, e.g. {@code idem.gateways.wechatpay}
     * @param gatewayOn whether the gateway's notifications are on
     * @param keysSet   whether every key that signs its requests is set
     * @param keyNames  those keys' names, for the messages
     */
    protected GatewayQuery(PaymentGateway gateway, PaymentsConfig.Query schedule, String prefix,
                           boolean gatewayOn, boolean keysSet, String keyNames) {
        this.gateway = gateway;
        this.schedule = schedule;
        this.enabled = schedule.enabled().orElse(gatewayOn && keysSet);
        if (enabled && !gatewayOn) {
            throw new IllegalStateException(prefix + ".query.enabled=true needs the gateway on: its answers are "
                    + "verified with the keys that verify its notifications");
        }
        if (enabled && !keysSet) {
            throw new IllegalStateException(prefix + ".query.enabled=true needs " + keyNames);
        }
        if (enabled && schedule.rate() < 1) {
            throw new IllegalStateException(prefix + ".query.rate must be at least 1 query per second");
        }
        if (gatewayOn && !keysSet && schedule.enabled().isEmpty()) {
            Log.warnf("%s is on, but its orders are not queried: set %s to find payments whose notification "
                    + "never came", prefix, keyNames);
        }
    }

    public PaymentGateway gateway() {
        return gateway;
    }

    public boolean enabled() {
        return enabled;
    }

    /** This gateway's {@code …query.*}. */
    public PaymentsConfig.Query schedule() {
        return schedule;
    }

    /**
     * One signed request and its verified answer; an answer that does not verify or read is a
     * {@link QueryAnswer.Failed}, and so is the Uni's failure (no answer: a transport error, a
     * timeout). Runs on the caller's Vert.x context and answers on it.
     */
    public abstract Uni<QueryAnswer> ask(String orderId);
}
