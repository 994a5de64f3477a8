-- An order names the gateway its payment goes through ("gateway" of POST /api/orders), so that a
-- payment whose notification never came can be asked of that gateway. NULL: the order named none,
-- and every gateway that is queried is asked.
-- The active query's schedule lives with the order it is about: query_at is when the gateway(s)
-- are next asked (NULL: never again), queries how many times they were. A claim moves query_at a
-- lease ahead in the statement that claims, so that two instances never ask about one order at
-- once; after the query it is set to the next time, with backoff, until the order expires.
ALTER TABLE orders
    ADD COLUMN gateway text,
    ADD COLUMN query_at timestamptz,
    ADD COLUMN queries integer NOT NULL DEFAULT 0,
    ADD CONSTRAINT orders_gateway_known CHECK (gateway IS NULL OR gateway IN ('wechatpay', 'alipay')),
    ADD CONSTRAINT orders_queries_counted CHECK (queries >= 0);

-- The claim of due queries. Only orders still waiting for their payment and still on the schedule
-- have an entry: a payment or a close leaves it (the row's new version is not WAIT_PAY), an order
-- taken off the schedule (expired, its gateway not queried) too, and orders made while no gateway
-- is queried never enter it.
CREATE INDEX orders_query_due ON orders (query_at) WHERE status = 'WAIT_PAY' AND query_at IS NOT NULL;
