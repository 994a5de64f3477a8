-- Every dedup record is written twice in its first transaction: claimed (PROCESSING), then DONE
-- with its result. With full pages the DONE version lands on another page and every index of the
-- table gets a new entry; with half of each page kept free it stays on its page as a heap-only
-- (HOT) update and no index is touched. Measured on coupon grants through Kafka: about a fifth
-- more grants per second. The price is a table about twice as large on disk.
ALTER TABLE dedup_record SET (fillfactor = 50);
