package dev.idem.payments;

import static dev.idem.payments.CallbackSignature.Check.MALFORMED;
import static dev.idem.payments.CallbackSignature.Check.MISMATCH;
import static dev.idem.payments.CallbackSignature.Check.MISSING;
import static dev.idem.payments.CallbackSignature.Check.STALE;
import static dev.idem.payments.CallbackSignature.Check.VALID;
import static dev.idem.payments.CallbackSignature.Check.VALID_PREVIOUS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testing.Gateway;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

class CallbackSignatureTest {

    static final long NOW = 1_796_000_000L;
    static final String BODY = Gateway.callback("T-1", "o-1", 1999, "SUCCESS");

    final CallbackSignature verifier = new CallbackSignature(Gateway.SECRET, Duration.ofSeconds(300),
            Clock.fixed(Instant.ofEpochSecond(NOW), ZoneOffset.UTC));

    CallbackSignature.Check verify(long ts, String signature, String body) {
        return verifier.verify(Long.toString(ts), signature, body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theGatewaysSignatureIsAccepted() {
        assertEquals(VALID, verify(NOW, Gateway.sign(NOW, BODY), BODY));
    }

    @Test
    void aTamperedBodyIsRefused() {
        String tampered = BODY.replace("1999", "1");
        assertEquals(MISMATCH, verify(NOW, Gateway.sign(NOW, BODY), tampered));
        assertEquals(MISMATCH, verify(NOW, Gateway.sign(NOW, BODY), BODY + " "));
    }

    @Test
    void anotherSecretIsRefused() {
        assertEquals(MISMATCH, verify(NOW, Gateway.sign("wrong-secret", NOW, BODY), BODY));
    }

    @Test
    void theTimestampIsPartOfTheSignature() {
        assertEquals(MISMATCH, verify(NOW, Gateway.sign(NOW - 1, BODY), BODY));
    }

    @Test
    void staleAndFutureTimestampsAreRefusedAtTheEdgeOfTheWindow() {
        assertEquals(VALID, verify(NOW - 300, Gateway.sign(NOW - 300, BODY), BODY));
        assertEquals(STALE, verify(NOW - 301, Gateway.sign(NOW - 301, BODY), BODY));
        assertEquals(VALID, verify(NOW + 300, Gateway.sign(NOW + 300, BODY), BODY));
        assertEquals(STALE, verify(NOW + 301, Gateway.sign(NOW + 301, BODY), BODY));
        assertEquals(STALE, verify(Long.MIN_VALUE, Gateway.sign(Long.MIN_VALUE, BODY), BODY));
        assertEquals(STALE, verify(Long.MAX_VALUE, Gateway.sign(Long.MAX_VALUE, BODY), BODY));
    }

    @Test
    void missingOrMalformedHeadersAreRefused() {
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        assertEquals(MISSING, verifier.verify(null, Gateway.sign(NOW, BODY), body));
        assertEquals(MISSING, verifier.verify(Long.toString(NOW), null, body));
        assertEquals(MISSING, verifier.verify("", "", body));
        assertEquals(MALFORMED, verifier.verify("yesterday", Gateway.sign(NOW, BODY), body));
        assertEquals(MALFORMED, verifier.verify(Long.toString(NOW), "not-hex", body));
        assertEquals(MISMATCH, verifier.verify(Long.toString(NOW), "abcd", body));
    }

    @Test
    void duringARotationPreviousSecretsAreValidAndToldApart() {
        CallbackSignature rotating = new CallbackSignature(Gateway.SECRET, List.of(" old-1 ", "", "old-2"),
                Duration.ofSeconds(300), Clock.fixed(Instant.ofEpochSecond(NOW), ZoneOffset.UTC));
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        String ts = Long.toString(NOW);

        assertEquals(VALID, rotating.verify(ts, Gateway.sign(NOW, BODY), body));
        assertEquals(VALID_PREVIOUS, rotating.verify(ts, Gateway.sign("old-1", NOW, BODY), body));
        assertEquals(VALID_PREVIOUS, rotating.verify(ts, Gateway.sign("old-2", NOW, BODY), body));
        assertEquals(MISMATCH, rotating.verify(ts, Gateway.sign("old-3", NOW, BODY), body));
    }
}
