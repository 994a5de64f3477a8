package dev.idem.pipeline;

/** What recovery did with one hanging record; {@link DedupAdmin.RedriveReport} counts them. */
enum Resumption {
    /** Another process seized it first (or confirmed it meanwhile). */
    LOST,
    /** No two-phase handler for its scope in this service: left for one that has it. */
    UNHANDLED,
    /** It had all its attempts: FAILED without running the effect again. */
    GAVE_UP,
    /** Taken over; the effect ran and was confirmed. */
    DONE,
    /** Taken over; the effect failed again and will be tried again after the retry delay. */
    RETRYING,
    /** Taken over; the effect failed on the last attempt: FAILED. */
    FAILED;

    boolean takenOver() {
        return this == DONE || this == RETRYING || this == FAILED;
    }

    boolean failed() {
        return this == GAVE_UP || this == FAILED;
    }

    /** The outcome of the attempt that followed a takeover. */
    static final Outcome.Cases<Resumption> AFTER_TAKEOVER = new Outcome.Cases<>() {
        public Resumption processed(Outcome.Processed o) { return DONE; }
        public Resumption duplicate(Outcome.Duplicate o) { return DONE; }
        public Resumption anomaly(Outcome.Anomaly o) { return DONE; }
        public Resumption inFlight(Outcome.InFlight o) { return RETRYING; }
        public Resumption keyReused(Outcome.KeyReused o) { return FAILED; }
        public Resumption rejected(Outcome.Rejected o) { return FAILED; }
    };
}
