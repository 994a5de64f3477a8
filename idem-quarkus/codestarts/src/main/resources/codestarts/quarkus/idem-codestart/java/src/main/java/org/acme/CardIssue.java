package org.acme;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** A gift-card-issues record, such as {"bizKey":"order-42","userId":"u1","amountCents":5000}. */
@RegisterForReflection
public record CardIssue(String bizKey, String userId, long amountCents) {
}
