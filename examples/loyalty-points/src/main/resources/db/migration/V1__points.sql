-- The service's own tables; the pipeline's come from the extension (db/idem).

CREATE TABLE points_balance (
    user_id    text        NOT NULL,
    points     bigint      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT points_balance_pk PRIMARY KEY (user_id),
    CONSTRAINT points_balance_not_negative CHECK (points >= 0)
);

-- One row per award key: should a key's dedup record be gone, this still refuses a second award.
CREATE TABLE points_award (
    award_key  text        NOT NULL,
    user_id    text        NOT NULL,
    points     integer     NOT NULL,
    awarded_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT points_award_once_per_key PRIMARY KEY (award_key),
    CONSTRAINT points_award_positive CHECK (points > 0)
);

CREATE INDEX points_award_by_user ON points_award (user_id);

-- One row per (user, Idempotency-Key), for the same reason; balance_after lets an answer be rebuilt.
CREATE TABLE points_redemption (
    redemption_id   uuid        NOT NULL,
    user_id         text        NOT NULL,
    idempotency_key text        NOT NULL,
    points          integer     NOT NULL,
    balance_after   bigint,
    redeemed_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT points_redemption_pk PRIMARY KEY (redemption_id),
    CONSTRAINT points_redemption_once_per_key UNIQUE (user_id, idempotency_key),
    CONSTRAINT points_redemption_positive CHECK (points > 0)
);
