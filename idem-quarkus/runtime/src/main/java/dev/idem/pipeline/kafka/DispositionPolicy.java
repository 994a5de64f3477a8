package dev.idem.pipeline.kafka;

import dev.idem.pipeline.Outcome;
import io.quarkus.arc.DefaultBean;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Which {@link Disposition} each outcome gets. The default: processed, duplicate and anomaly are
 * acked (retrying cannot change them), in flight is retried later, a reused key and a rejection
 * are dead-lettered with why (a rejection given again as its key's first answer too, so that the
 * record is in the dead-letter topic for people to see). A service changes it by declaring a bean of this type.
 */
@FunctionalInterface
public interface DispositionPolicy {

    Disposition of(Outcome outcome);

    /** The policy in force unless the service declares its own. */
    @ApplicationScoped
    @DefaultBean
    class Default implements DispositionPolicy {

        private static final Outcome.Cases<Disposition> CASES = new Outcome.Cases<>() {
            public Disposition processed(Outcome.Processed o) { return new Disposition.Ack(); }
            public Disposition duplicate(Outcome.Duplicate o) { return new Disposition.Ack(); }
            public Disposition anomaly(Outcome.Anomaly o) { return new Disposition.Ack(); }
            public Disposition inFlight(Outcome.InFlight o) { return new Disposition.RetryLater(); }
            public Disposition keyReused(Outcome.KeyReused o) {
                return new Disposition.DeadLetter("KEY_REUSED: this key was received before with other content");
            }
            public Disposition rejected(Outcome.Rejected o) {
                return new Disposition.DeadLetter(o.reason() + ": " + o.detail()
                        + (o.replayed() ? " (the key's first answer, given again)" : ""));
            }
        };

        @Override
        public Disposition of(Outcome outcome) {
            return outcome.accept(CASES);
        }
    }
}
