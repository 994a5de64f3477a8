package dev.idem.extension.it;

/** The body of {@code POST /ledger}: {@code amount} (negative: a debit) entered on {@code account}. */
public record LedgerEntry(String account, Long amount) {}
