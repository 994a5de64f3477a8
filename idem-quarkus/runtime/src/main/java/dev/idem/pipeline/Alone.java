package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;

/**
 * The simplest way to gather deliveries: the ones given together (distinct keys) share one
 * transaction, and nothing waits for company. A single delivery's, with
 * {@code idem.pipeline.group-commit.max-size=1}.
 */
@ApplicationScoped
class Alone implements Gathering {

    private final OnePhase protocol;

    Alone(OnePhase protocol) {
        this.protocol = protocol;
    }

    @Override
    public Uni<List<Outcome>> execute(List<Item> items) {
        return protocol.run(items, protocol::transact, false);
    }
}
