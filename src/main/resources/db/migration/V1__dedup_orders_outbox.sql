-- The schema reads as the design: every invariant idem relies on is a named constraint here.

-- dedup_record and dedup_record_archive are the idempotency pipeline's tables: the extension's
-- script db/idem/R__idem_pipeline_tables.sql alone creates and changes them.

CREATE TABLE orders (
    id            text        NOT NULL,
    user_id       text        NOT NULL,
    amount_cents  bigint      NOT NULL,
    currency      text        NOT NULL,
    status        text        NOT NULL,
    trade_no      text,
    created_at    timestamptz NOT NULL,
    paid_at       timestamptz,
    closed_at     timestamptz,
    CONSTRAINT orders_pk PRIMARY KEY (id),
    CONSTRAINT orders_amount_in_range CHECK (amount_cents BETWEEN 1 AND 100000000),
    CONSTRAINT orders_currency_iso CHECK (currency ~ '^[A-Z]{3}$'),
    CONSTRAINT orders_status_known CHECK (status IN ('WAIT_PAY', 'PAID', 'CLOSED')),
    -- one trade number pays at most one order, and a paid order carries exactly one
    CONSTRAINT orders_one_order_per_trade_no UNIQUE (trade_no),
    CONSTRAINT orders_paid_has_trade CHECK (status <> 'PAID' OR (trade_no IS NOT NULL AND paid_at IS NOT NULL)),
    CONSTRAINT orders_closed_has_time CHECK (status <> 'CLOSED' OR closed_at IS NOT NULL)
);
CREATE INDEX orders_by_user ON orders (user_id, created_at);

-- Callbacks that cannot be applied are kept for people to resolve; retrying cannot fix them.
CREATE TABLE payment_anomaly (
    id               bigint GENERATED ALWAYS AS IDENTITY,
    kind             text        NOT NULL,
    order_id         text        NOT NULL,
    trade_no         text        NOT NULL,
    callback_status  text        NOT NULL,
    detail           jsonb       NOT NULL,
    resolved         boolean     NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL,
    CONSTRAINT payment_anomaly_pk PRIMARY KEY (id),
    CONSTRAINT payment_anomaly_kind_known
        CHECK (kind IN ('AMOUNT_MISMATCH', 'DOUBLE_PAYMENT', 'PAID_AFTER_CLOSE', 'ILLEGAL_TRANSITION'))
);
CREATE INDEX payment_anomaly_unresolved ON payment_anomaly (created_at) WHERE NOT resolved;

-- Side effects leave with the transition that caused them: written in the same transaction,
-- published later by a relay. One event per (topic, key): a paid order yields one grant event.
CREATE TABLE outbox_event (
    id            bigint GENERATED ALWAYS AS IDENTITY,
    topic         text        NOT NULL,
    event_key     text        NOT NULL,
    payload       jsonb       NOT NULL,
    created_at    timestamptz NOT NULL,
    published_at  timestamptz,
    CONSTRAINT outbox_event_pk PRIMARY KEY (id),
    CONSTRAINT outbox_event_one_per_key UNIQUE (topic, event_key)
);
CREATE INDEX outbox_event_unpublished ON outbox_event (id) WHERE published_at IS NULL;
