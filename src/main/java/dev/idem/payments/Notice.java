package dev.idem.payments;

/**
 * What a payment gateway's notification turned out to be once read at the edge, before anything
 * is recorded. Each gateway's resource answers every case in its own format through {@link Cases}.
 */
public sealed interface Notice {

    /** Authentic and understood: a payment notification for {@link PaymentService#apply}. */
    record Payment(PaymentCallback callback) implements Notice {
        public <T> T accept(Cases<T> cases) {
            return cases.payment(this);
        }
    }

    /** Authentic, about a state idem does not act on: acknowledged so the gateway stops. */
    record Ignored(String reason) implements Notice {
        public <T> T accept(Cases<T> cases) {
            return cases.ignored(this);
        }
    }

    /** Not shown to come from the gateway (signature, key, timestamp, application). */
    record Unauthentic(String reason) implements Notice {
        public <T> T accept(Cases<T> cases) {
            return cases.unauthentic(this);
        }
    }

    /** Not a notification that can be read: malformed, undecryptable or missing members. */
    record Unreadable(String reason) implements Notice {
        public <T> T accept(Cases<T> cases) {
            return cases.unreadable(this);
        }
    }

    <T> T accept(Cases<T> cases);

    /** The name under which a notice is counted. */
    default String name() {
        return accept(NAMES);
    }

    interface Cases<T> {
        T payment(Payment notice);

        T ignored(Ignored notice);

        T unauthentic(Unauthentic notice);

        T unreadable(Unreadable notice);
    }

    Cases<String> NAMES = new Cases<>() {
        public String payment(Payment n) { return "payment"; }
        public String ignored(Ignored n) { return "ignored"; }
        public String unauthentic(Unauthentic n) { return "unauthentic"; }
        public String unreadable(Unreadable n) { return "unreadable"; }
    };
}
