package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A Kafka poll through the {@link OnePhase} protocol: one round per copy of a key, each round one
 * Redis call of pre-checks, one transaction and one Redis call of DONE marks, instead of those per
 * record. A key that comes twice in a poll has its second copy in the next round, after the first
 * committed: it then meets the first as any duplicate does.
 *
 * <p>If a transaction fails, the Uni fails: the deliveries of that round that were tried alone
 * after an error and committed are duplicates when the caller retries the poll.
 */
@ApplicationScoped
class PollRounds {

    private final OnePhase protocol;

    PollRounds(OnePhase protocol) {
        this.protocol = protocol;
    }

    /** The outcome of each of {@code items}, in their order. */
    Uni<List<Outcome>> execute(List<Item> items) {
        List<Outcome> outcomes = new ArrayList<>(Collections.nCopies(items.size(), null));
        Uni<Void> done = Uni.createFrom().voidItem();
        for (List<Integer> round : rounds(items)) {
            List<Item> part = round.stream().map(items::get).toList();
            Supplier<Uni<List<Outcome>>> run = DeliveryTraces.inThisTrace(() -> protocol.run(part, protocol::transact, true));
            done = done.chain(() -> run.get().invoke(settled -> {
                for (int j = 0; j < round.size(); j++) {
                    outcomes.set(round.get(j), settled.get(j));
                }
            })).replaceWithVoid();
        }
        return done.replaceWith(outcomes);
    }

    /** The items' indices by round: the n-th copy of a key goes to round n. */
    private static List<List<Integer>> rounds(List<Item> items) {
        List<List<Integer>> rounds = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < items.size(); i++) {
            int round = seen.merge(DedupStore.batchKey(items.get(i).request()), 1, Integer::sum) - 1;
            if (round == rounds.size()) {
                rounds.add(new ArrayList<>());
            }
            rounds.get(round).add(i);
        }
        return rounds;
    }
}
