package dev.idem.extension.it;

import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Size;

/** A {@code ledger-postings} record: {@code amount} entered on {@code account}, once for {@code ref}. */
public record LedgerPosting(String ref, @NotBlank @Size(max = 64) String account, Long amount) {}
