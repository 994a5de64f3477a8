-- Archives keep the hot tables small: dedup_record's unique index is on every delivery's path.
-- A row is moved once its retention has passed; the state machine and coupons_one_per_source
-- still stop a duplicate that arrives later than that.

CREATE TABLE dedup_record_archive (
    scope        text        NOT NULL,
    key          text        NOT NULL,
    fingerprint  text        NOT NULL,
    status       text        NOT NULL,
    result       jsonb,
    attempts     integer     NOT NULL,
    lease_until  timestamptz,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    archived_at  timestamptz NOT NULL,
    -- a key can come back after archiving (a very late duplicate) and be archived again
    CONSTRAINT dedup_record_archive_pk PRIMARY KEY (scope, key, created_at)
);

CREATE TABLE outbox_event_archive (
    id            bigint      NOT NULL,
    topic         text        NOT NULL,
    event_key     text        NOT NULL,
    payload       jsonb       NOT NULL,
    created_at    timestamptz NOT NULL,
    published_at  timestamptz NOT NULL,
    archived_at   timestamptz NOT NULL,
    CONSTRAINT outbox_event_archive_pk PRIMARY KEY (id)
);
CREATE INDEX outbox_event_archive_by_key ON outbox_event_archive (topic, event_key);
