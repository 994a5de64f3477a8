package dev.idem.payments.bills;

import dev.idem.orders.PaymentGateway;
import io.smallrye.mutiny.Uni;
import java.time.LocalDate;
import java.util.Optional;

/**
 * One gateway's daily transaction bill: fetched from the gateway, or read from the file an
 * operator downloaded. Each gateway writes it its own way ({@code WeChatPayBills},
 * {@code AlipayBills}); what comes out is a {@link Bill} whose lines are deliveries of payments.
 */
public interface GatewayBills {

    PaymentGateway gateway();

    /** Whether the gateway is on: its notifications' keys are set. A gateway that is off has no bills here. */
    boolean on();

    /**
     * Why a bill cannot be fetched from the gateway (the keys that sign the request are not set),
     * or empty when it can.
     */
    Optional<String> cannotFetch();

    /**
     * The day's bill, asked of the gateway: {@link BillRead.Downloaded} once the answer's signature
     * verified and the file came, to be read by {@link #read}; another case when not.
     */
    Uni<BillRead> fetch(LocalDate date);

    /** The day's bill from the file as the gateway gave it for download, its hash already checked. */
    BillRead read(LocalDate date, byte[] file);
}
