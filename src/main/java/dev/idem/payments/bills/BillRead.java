package dev.idem.payments.bills;

/** What came of reading a bill, fetched from its gateway or given as a file. */
public sealed interface BillRead {

    /**
     * Fetched from the gateway, not read yet: {@link GatewayBills#read} reads it, off the event
     * loop. {@code hash}: what the gateway's signed answer said the file's hash is.
     */
    record Downloaded(byte[] file, java.util.Optional<String> hash) implements BillRead {}

    /** Read whole, its hash or signature verified: every line may be applied. */
    record Valid(Bill bill) implements BillRead {}

    /** It does not parse, or its hash or signature does not match: nothing of it is applied. */
    record Invalid(String reason) implements BillRead {}

    /** The gateway has no bill for that day (none made yet, or no trade that day). */
    record Missing(String reason) implements BillRead {}

    /** The gateway did not answer, or answered that it cannot now: ask again later. */
    record Unavailable(String reason) implements BillRead {}
}
