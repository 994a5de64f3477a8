-- The campaign a paid order earned, written by the PAID transition itself: reconciliation asks
-- "does every order that earned a coupon have it?" without guessing from today's configuration.
ALTER TABLE orders ADD COLUMN campaign text;
ALTER TABLE orders ADD CONSTRAINT orders_campaign_only_when_paid CHECK (campaign IS NULL OR status = 'PAID');
