package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import java.util.List;

/**
 * How one-phase deliveries are gathered into the {@link OnePhase} protocol's transactions:
 * {@link Alone}, {@link GroupCommit} (concurrent requests share a transaction; chosen by
 * {@code idem.pipeline.group-commit.max-size}) or {@link PollRounds} (a Kafka poll).
 */
interface Gathering {

    /** The outcome of each of {@code items}, in their order. */
    Uni<List<Outcome>> execute(List<Item> items);
}
