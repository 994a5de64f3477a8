package dev.idem.extension.it;

import java.util.UUID;

/** An issued voucher, as the API answers it. */
public record Voucher(UUID id, String code, String holder, int amount) {}
