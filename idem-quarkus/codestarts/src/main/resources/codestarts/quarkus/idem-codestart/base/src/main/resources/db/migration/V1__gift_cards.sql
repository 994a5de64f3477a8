-- The service's own table; the extension puts its tables (dedup_record, ...) in place itself.
CREATE TABLE gift_card (
    card_id       uuid        PRIMARY KEY,
    -- one card per issue, even for a copy that comes after the pipeline's record of it is archived
    biz_key       text        NOT NULL UNIQUE,
    user_id       text        NOT NULL,
    balance_cents bigint      NOT NULL CHECK (balance_cents >= 0),
    issued_at     timestamptz NOT NULL DEFAULT now()
);
