-- Every delivery searches dedup_record's primary key, and a batch of grants searches it twice per
-- key (the claim and the completion). Two things made each step of that search dear:
--  * scope came first. It takes only a few values, so nearly every comparison found scope equal
--    and went on to key, the second column, which Postgres reaches more slowly.
--  * both columns compared by the database's locale (such as C.UTF-8), through strcoll. Postgres
--    takes its byte-comparison shortcut only for the "C" collation, even though C.UTF-8 orders
--    the same way (by code point, which is UTF-8's byte order).
-- Neither changes what is unique: equality was byte for byte before as well. Measured with
-- pgbench, claims and completions of 500 keys, 4 clients, six alternating runs: median 142
-- batches/s as before, 164 with "C" alone, 157 with key first alone, 174 with both.
-- One statement, so that the key's index is built once: the collation change alone would
-- rebuild the old index before it is dropped (on 500,000 rows: 0.5 s instead of 1.7 s).
ALTER TABLE dedup_record
    DROP CONSTRAINT dedup_record_one_per_scope_key,
    ALTER COLUMN scope TYPE text COLLATE "C",
    ALTER COLUMN key TYPE text COLLATE "C",
    ADD CONSTRAINT dedup_record_one_per_scope_key PRIMARY KEY (key, scope);
