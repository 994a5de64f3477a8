-- The application's own tables; the pipeline's (dedup_record, dedup_record_archive) are put in
-- place by the extension at start-up.

-- A voucher code is issued once: the table's own unique constraint refuses a second issue even
-- when the code's dedup record is gone.
CREATE TABLE vouchers (
    id        uuid        NOT NULL,
    code      text        NOT NULL,
    holder    text        NOT NULL,
    amount    integer     NOT NULL,
    issued_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT vouchers_pk PRIMARY KEY (id),
    CONSTRAINT vouchers_one_per_code UNIQUE (code)
);

-- Entries of accounts: nothing here tells two entries of one cause apart, so only the pipeline
-- keeps a delivery from being entered twice.
CREATE TABLE ledger (
    id         bigint      GENERATED ALWAYS AS IDENTITY,
    account    text        NOT NULL,
    amount     bigint      NOT NULL,
    ref        text,
    entered_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ledger_pk PRIMARY KEY (id)
);

CREATE INDEX ledger_by_account ON ledger (account);
CREATE INDEX ledger_by_ref ON ledger (ref);
