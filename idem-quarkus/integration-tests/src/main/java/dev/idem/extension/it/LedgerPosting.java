package dev.idem.extension.it;

/** A {@code ledger-postings} record: {@code amount} entered on {@code account}, once for {@code ref}. */
public record LedgerPosting(String ref, String account, Long amount) {}
