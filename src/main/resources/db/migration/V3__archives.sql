-- Archives keep the hot tables small. A row is moved once its retention has passed.
-- dedup_record and dedup_record_archive are the idempotency pipeline's tables: the extension's
-- script db/idem/R__idem_pipeline_tables.sql alone creates and changes them.

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
