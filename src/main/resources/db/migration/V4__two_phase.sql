-- Two-phase records: work whose effect lies outside the database (an external coupon issuer)
-- commits its dedup record as PROCESSING under a lease before the effect runs, and confirms it
-- DONE afterwards. A record still PROCESSING past its lease is hanging; whoever takes it over
-- must be able to run the effect again, so the record carries the request it stands for.

-- What to do: the request of an unfinished two-phase record. Set at the claim, cleared when the
-- record is confirmed DONE, kept when it is FAILED (for the person who resolves it). One-phase
-- records never carry one: their claim, work and DONE share one transaction.
ALTER TABLE dedup_record ADD COLUMN payload jsonb;

-- Why the last attempt of a two-phase effect failed (issuer error, timeout, refusal).
ALTER TABLE dedup_record ADD COLUMN last_error text;

-- Exactly the unfinished two-phase records (in flight, hanging, FAILED): what recovery and
-- reconciliation look through. Its column and predicate are ones the one-phase path never
-- changes after the insert, so marking a one-phase record DONE stays a HOT update and one-phase
-- records never enter this index.
CREATE INDEX dedup_record_unfinished_two_phase ON dedup_record (created_at) WHERE payload IS NOT NULL;
