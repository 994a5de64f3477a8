package dev.idem.outbox;

import jakarta.enterprise.context.ApplicationScoped;

/**
 * Tells this instance's relay that outbox events committed. In-process rather than a Postgres
 * NOTIFY: a notifying transaction takes a global lock at commit, which would serialise every
 * callback's commit. Events written by an
 * instance whose relay is off wait for another instance's poll.
 */
@ApplicationScoped
public class OutboxSignal {

    private volatile Runnable listener = () -> {};

    void listen(Runnable listener) {
        this.listener = listener;
    }

    void committed() {
        listener.run();
    }
}
