-- The last import of each gateway's daily bill: the report POST answered, so that GET answers it
-- again and the console shows it. Importing the same day again replaces it; the lines themselves
-- are deliveries of payments, recorded by the pipeline like notifications.
CREATE TABLE gateway_bills (
    gateway     text        NOT NULL CHECK (gateway IN ('wechatpay', 'alipay')),
    bill_date   date        NOT NULL,
    imported_at timestamptz NOT NULL,
    report      jsonb       NOT NULL,
    PRIMARY KEY (gateway, bill_date)
);

-- No index for the comparison of a day's paid orders with the bill: it runs once a day per
-- gateway, and an index on paid_at would cost every payment a write.
