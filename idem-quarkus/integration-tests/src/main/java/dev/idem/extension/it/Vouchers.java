package dev.idem.extension.it;

import dev.idem.pipeline.Statement;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/** All SQL on {@code vouchers}. */
@ApplicationScoped
public class Vouchers {

    /**
     * A plain insert: a code issued before breaks {@code vouchers_one_per_code}, and the pipeline
     * judges that delivery by its key's record.
     */
    private static final String ISSUE = "INSERT INTO vouchers (id, code, holder, amount) VALUES ($1, $2, $3, $4)";

    /** Issues {@code issue} in {@code tx}, the pipeline's transaction: every statement goes through it. */
    public Uni<Voucher> issue(SqlConnection tx, VoucherIssue issue) {
        Voucher voucher = voucher(issue);
        return inserting(voucher).on(tx).replaceWith(voucher);
    }

    /** The voucher {@code issue} makes; its id is made here, so it is known before its insert answers. */
    public Voucher voucher(VoucherIssue issue) {
        return new Voucher(UUID.randomUUID(), issue.code(), issue.holder(), issue.amount());
    }

    /** The insert of {@code voucher}, not yet sent. */
    public Statement inserting(Voucher voucher) {
        return Statement.of(ISSUE, Tuple.of(voucher.id(), voucher.code(), voucher.holder(), voucher.amount()));
    }
}
