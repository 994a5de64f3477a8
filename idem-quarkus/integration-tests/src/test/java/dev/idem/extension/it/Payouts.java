package dev.idem.extension.it;

import dev.idem.pipeline.Effect;
import dev.idem.pipeline.TwoPhaseScope;
import dev.idem.pipeline.TwoPhaseWork;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code it-payouts}: a two-phase work whose effect is a transfer at another team's service (here,
 * counted per key), confirmed by a ledger entry in the transaction that marks the record DONE.
 * Part of the application under {@code @QuarkusTest} only.
 */
@ApplicationScoped
@TwoPhaseScope(Payouts.SCOPE)
public class Payouts implements TwoPhaseWork {

    static final String SCOPE = "it-payouts";

    private final Ledger ledger;
    private final Map<String, AtomicInteger> transfers = new ConcurrentHashMap<>();

    Payouts(Ledger ledger) {
        this.ledger = ledger;
    }

    @Override
    public Uni<JsonObject> perform(String key, JsonObject payload) {
        transfers.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        return Uni.createFrom().item(new JsonObject().put("transfer", "t-" + key));
    }

    @Override
    public Uni<Effect> confirm(SqlConnection tx, String key, JsonObject payload, JsonObject performed) {
        return ledger.enter(tx, payload.getString("account"), payload.getLong("amount"), performed.getString("transfer"))
                .replaceWith(Effect.processed(performed));
    }

    /** How often the transfer of {@code key} was asked for. */
    int transfers(String key) {
        AtomicInteger n = transfers.get(key);
        return n == null ? 0 : n.get();
    }
}
