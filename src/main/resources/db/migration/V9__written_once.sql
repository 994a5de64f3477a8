-- No query reads orders by user: an order is found by its id and then checked for its owner.
-- The index cost every order insert and every payment (a PAID update changes trade_no, so it is
-- never heap-only and enters every index of the table).
DROP INDEX orders_by_user;
