package dev.idem.orders;

import java.time.Instant;
import java.util.Optional;

/**
 * When a new order's payment is first asked of its gateway (the active query), decided where the
 * gateways and their configuration are known. Empty: the order is never asked, as when no gateway
 * that could have taken its payment is queried.
 */
public interface FirstQuery {

    Optional<Instant> at(Order order);
}
