package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.util.Set;

/** The store contract of the in-memory store the protocols' tests and the kit run on. */
class InMemoryDedupStoreTest extends DedupStoreContract {

    private InMemoryDatabase memory;

    @Override
    DedupStore emptyStore() {
        memory = new InMemoryDatabase();
        return new InMemoryDedupStore(memory);
    }

    @Override
    DedupStore unreachable() {
        InMemoryDatabase down = new InMemoryDatabase();
        down.faults.goDown();
        return new InMemoryDedupStore(down);
    }

    @Override
    Uni<Void> insertRow(SqlConnection tx, String name) {
        return memory.insert(tx, name, name);
    }

    @Override
    Set<String> rows() {
        return memory.rows().keySet();
    }

    @Override
    boolean aStatementWaits() {
        return memory.waiting() > 0;
    }
}
