package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.util.Set;

/** The store contract of the in-memory store the protocols' tests and the kit run on. */
class InMemoryDedupStoreTest extends DedupStoreContract {

    private InMemoryDedupStore memory;

    @Override
    DedupStore emptyStore() {
        memory = new InMemoryDedupStore();
        return memory;
    }

    @Override
    DedupStore unreachable() {
        InMemoryDedupStore down = new InMemoryDedupStore();
        down.db.faults.goDown();
        return down;
    }

    @Override
    Uni<Void> insertRow(SqlConnection tx, String name) {
        return memory.db.insert(tx, name, name);
    }

    @Override
    Set<String> rows() {
        return memory.db.rows().keySet();
    }

    @Override
    boolean aStatementWaits() {
        return memory.db.waiting() > 0;
    }
}
