-- The dead letters sent back to their source topic (POST /admin/dead-letters/{channel}/redrive).
-- A row is inserted in the transaction that waits for the broker's acks of the records it names,
-- so it commits only once they were sent: a dead letter with a row was re-driven, and a re-drive
-- skips it. A crash between the acks and the commit leaves no row, and the next re-drive sends
-- the record again, which the pipeline stops like any duplicate delivery.
CREATE TABLE dead_letter_redrive (
    dead_letter_topic      text        NOT NULL,
    dead_letter_partition  integer     NOT NULL,
    dead_letter_offset     bigint      NOT NULL,
    -- the record's Kafka timestamp (ms since the epoch): a topic deleted and made again reuses
    -- positions, and its new records must not pass for ones re-driven before
    dead_letter_timestamp  bigint      NOT NULL,
    channel                text        NOT NULL,
    topic                  text        NOT NULL,
    redriven_at            timestamptz NOT NULL,
    CONSTRAINT dead_letter_redrive_once_per_dead_letter
        PRIMARY KEY (dead_letter_topic, dead_letter_partition, dead_letter_offset, dead_letter_timestamp),
    CONSTRAINT dead_letter_redrive_position_valid CHECK (dead_letter_partition >= 0 AND dead_letter_offset >= 0),
    CONSTRAINT dead_letter_redrive_back_to_another_topic CHECK (topic <> dead_letter_topic)
);
