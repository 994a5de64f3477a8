-- Every index costs each insert that enters it. docs/DESIGN.md names the query each remaining
-- index serves; these three served none, or none that needed them.

-- One trade number pays at most one order, as before; but only a paid order has one, so the
-- index no longer takes an entry for every order waiting for its payment: an order submit now
-- inserts into the primary key alone. The PAY update's check (no other order has this trade
-- number) is served by the same index.
ALTER TABLE orders DROP CONSTRAINT orders_one_order_per_trade_no;
CREATE UNIQUE INDEX orders_one_order_per_trade_no ON orders (trade_no) WHERE trade_no IS NOT NULL;

-- Reconciliation groups all coupons since a date by order (more than one coupon for one order):
-- a scan of the table, which the index does not spare. Every grant paid for it.
DROP INDEX coupons_by_order;

-- Nothing reads archived outbox events by key.
DROP INDEX outbox_event_archive_by_key;
