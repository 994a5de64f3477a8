package dev.idem.testing;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

/** What the database says of payments: an order's status, its dedup records, grants and anomalies. */
@Singleton
public final class Ledger {

    private final Db db;

    @Inject
    public Ledger(Db db) {
        this.db = db;
    }

    public String status(String order) {
        return db.string("SELECT status FROM orders WHERE id = $1", order);
    }

    /** The callback scope's records of one trade, whatever its status. */
    public long dedupRecords(String tradeNo) {
        return db.count("SELECT count(*) FROM dedup_record WHERE scope = 'payment-callback' AND key LIKE $1",
                tradeNo + ":%");
    }

    /** The campaign's grant events written for the order. */
    public long grants(String order) {
        return db.count("SELECT count(*) FROM outbox_event WHERE event_key = $1", "paid:" + order);
    }

    public long anomalies(String order, String kind) {
        return db.count("SELECT count(*) FROM payment_anomaly WHERE order_id = $1 AND kind = $2", order, kind);
    }
}
