-- The last line of defence against a doubled grant: one coupon per source, whatever got past
-- Redis, the dedup table (archived, say) and the consumer.
CREATE TABLE coupons (
    id           text        NOT NULL,
    user_id      text        NOT NULL,
    template_id  text        NOT NULL,
    source_key   text        NOT NULL,
    order_id     text,
    granted_at   timestamptz NOT NULL,
    CONSTRAINT coupons_pk PRIMARY KEY (id),
    CONSTRAINT coupons_one_per_source UNIQUE (source_key)
);
CREATE INDEX coupons_by_user ON coupons (user_id, granted_at);
CREATE INDEX coupons_by_order ON coupons (order_id) WHERE order_id IS NOT NULL;

-- Wakes the outbox relay when events commit (NOTIFY is delivered at commit, once per
-- transaction for equal payloads); a slow poll covers a missed notification.
CREATE FUNCTION outbox_event_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('outbox_event', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER outbox_event_inserted
    AFTER INSERT ON outbox_event
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_event_notify();
