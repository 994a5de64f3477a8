package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What operators and jobs do with dedup records, beside the protocols' own {@link DedupStore}:
 * recovery's and reconciliation's queries over two-phase records, an operator's re-drive, a key's
 * trail and its repair. {@link PgDedupRecords} in Postgres; archiving is {@link DedupArchive}'s.
 */
interface DedupRecords {

    /** Two-phase records still PROCESSING after their lease, the longest-hanging first. */
    Uni<List<DedupRecord>> hanging(Instant now, int limit);

    /**
     * Gives a FAILED two-phase record its attempts anew (an operator's re-drive, once the cause is
     * fixed): PROCESSING under a lease already past at {@code now}, with no attempt counted, so that
     * it is hanging and a takeover runs it. Empty when the key has no FAILED two-phase record.
     */
    Uni<Optional<DedupRecord>> reopen(String scope, String key, Instant now);

    /**
     * What reconciliation asks of the records written since {@code since}: the two-phase ones
     * hanging at {@code now} (PROCESSING past their lease) and the FAILED ones, each counted with
     * up to {@code samples} of their keys; in that order.
     */
    Uni<List<Finding>> unfinished(Instant since, Instant now, int samples);

    /** Those of {@code marks} whose key has no record. */
    Uni<List<DedupCache.Mark>> withoutRecord(List<DedupCache.Mark> marks);

    /** One key's record, for its trail. */
    Uni<Optional<DedupRecord>> find(String scope, String key);

    /** Drops the DONE record of one key so that it can be processed again (repair only); true when one went. */
    Uni<Boolean> forget(String scope, String key);
}
